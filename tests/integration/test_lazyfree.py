"""Lazy freeing: UNLINK, DEL, FLUSHALL/FLUSHDB [ASYNC|SYNC], expiry and
overwrites hand big values (more than 64 allocations to free) to the
background thread; the lazyfree-lazy-* settings decide which paths may;
INFO memory reports lazyfree_pending_objects and lazyfreed_objects and
used_memory comes back once the values are freed.

Every test runs on a private server so the counters start at zero."""
import socket
import time

import pytest
from resp import Error, RespConn, encode

LAZY_CONFIGS = ["lazyfree-lazy-eviction", "lazyfree-lazy-expire", "lazyfree-lazy-server-del",
                "lazyfree-lazy-user-del", "lazyfree-lazy-user-flush"]
BIG = 100_000


def info(c, field):
    for line in c.info_raw().splitlines():
        if line.startswith(field + ":"):
            return int(line.split(":", 1)[1])
    raise AssertionError("no %s in INFO" % field)


class Srv:
    """A private server and a RESP2 connection to it."""

    def __init__(self, srv):
        self.srv = srv
        self.c = RespConn(srv.host, srv.port, timeout=60)

    def cmd(self, *args):
        return self.c.cmd(*args)

    def info_raw(self):
        reply = self.c.cmd("INFO", "memory")
        return reply.decode() if isinstance(reply, bytes) else str(reply)

    def pending(self):
        return info(self, "lazyfree_pending_objects")

    def freed(self):
        return info(self, "lazyfreed_objects")

    def used(self):
        return info(self, "used_memory")

    def wait_idle(self, timeout=60):
        deadline = time.time() + timeout
        while self.pending() != 0:
            assert time.time() < deadline, "lazy free never finished"
            time.sleep(0.01)

    def fill(self, kind, key, n, prefix="member:"):
        """A big value of n elements, 1000 per command, pipelined."""
        batch = []
        for start in range(0, n, 1000):
            members = ["%s%d" % (prefix, i) for i in range(start, min(n, start + 1000))]
            if kind == "list":
                batch.append(("RPUSH", key, *members))
            elif kind == "set":
                batch.append(("SADD", key, *members))
            elif kind == "zset":
                args = []
                for i, m in enumerate(members):
                    args += [str(start + i), m]
                batch.append(("ZADD", key, *args))
            elif kind == "hash":
                args = []
                for m in members:
                    args += [m, "v"]
                batch.append(("HSET", key, *args))
        self.c.send(b"".join(encode(*c) for c in batch))
        for _ in batch:
            reply = self.c.read()
            assert not isinstance(reply, Exception), reply


@pytest.fixture
def lz(new_server):
    """A private server with every lazyfree-lazy-* setting on (Redis's
    defaults are all "no"); later options override these."""
    def make(*extra):
        on = [w for name in LAZY_CONFIGS for w in ("--" + name, "yes")]
        return Srv(new_server(*on, *extra))
    return make


# ---- configuration ---------------------------------------------------------


def test_config_defaults_and_set(new_server):
    s = Srv(new_server())
    for name in LAZY_CONFIGS:
        assert s.cmd("CONFIG", "GET", name) == [name.encode(), b"no"]
        assert s.cmd("CONFIG", "SET", name, "no") == "OK"
        assert s.cmd("CONFIG", "GET", name) == [name.encode(), b"no"]
        assert s.cmd("CONFIG", "SET", name, "YES") == "OK"
        assert s.cmd("CONFIG", "GET", name) == [name.encode(), b"yes"]
        err = s.cmd("CONFIG", "SET", name, "maybe")
        assert isinstance(err, Error)
        assert str(err).startswith("ERR CONFIG SET failed (possibly related to argument '%s')" % name)
    got = s.cmd("CONFIG", "GET", "lazyfree-*")
    assert sorted(got[0::2]) == sorted(n.encode() for n in LAZY_CONFIGS)


def test_config_from_command_line(lz):
    s = lz("--lazyfree-lazy-user-del", "no", "--lazyfree-lazy-user-flush", "no")
    assert s.cmd("CONFIG", "GET", "lazyfree-lazy-user-del") == [b"lazyfree-lazy-user-del", b"no"]
    assert s.cmd("CONFIG", "GET", "lazyfree-lazy-user-flush") == [b"lazyfree-lazy-user-flush", b"no"]


def test_info_fields(lz):
    s = lz()
    text = s.info_raw()
    assert "lazyfree_pending_objects:0\r\n" in text
    assert "lazyfreed_objects:0\r\n" in text
    # Both live in the memory section, after active_defrag_running.
    lines = text.split("\r\n")
    i = lines.index("active_defrag_running:0")
    assert lines[i + 1] == "lazyfree_pending_objects:0"
    assert lines[i + 2] == "lazyfreed_objects:0"


# ---- UNLINK and DEL ----------------------------------------------------------


@pytest.mark.parametrize("kind", ["list", "set", "zset", "hash"])
def test_unlink_big_value(lz, kind):
    s = lz()
    base = s.used()
    s.fill(kind, "big", BIG)
    peak = s.used()
    assert peak > base + 1_000_000
    t0 = time.time()
    assert s.cmd("UNLINK", "big") == 1
    took = time.time() - t0
    assert s.cmd("EXISTS", "big") == 0
    s.wait_idle()
    assert s.freed() == 1
    after = s.used()
    # Back near where it started: well under a tenth of what the value held.
    assert after < base + (peak - base) // 10, (base, peak, after)
    assert took < 5


def test_unlink_and_del_replies(lz):
    s = lz()
    s.fill("set", "a", 1000)
    s.cmd("SET", "b", "x")
    assert s.cmd("UNLINK", "a", "b", "missing", "a") == 2
    assert s.cmd("DEL", "a", "b") == 0
    s.fill("list", "c", 5000)
    assert s.cmd("DEL", "c", "c") == 1
    assert s.cmd("UNLINK") == Error("ERR wrong number of arguments for 'unlink' command")
    s.wait_idle()


def test_unlink_resp3(new_server):
    srv = new_server()
    c = RespConn(srv.host, srv.port)
    assert not isinstance(c.cmd("HELLO", "3"), Exception)
    c.cmd("RPUSH", "l", "a", "b")
    assert c.cmd("UNLINK", "l", "nokey") == 1
    assert c.cmd("DEL", "l") == 0
    assert c.cmd("FLUSHALL", "ASYNC") == "OK"
    assert c.cmd("FLUSHDB", "SYNC") == "OK"
    c.close()


def test_small_values_are_freed_in_place(lz):
    s = lz("--set-max-listpack-entries", "0", "--set-max-intset-entries", "0", "--list-max-listpack-size", "1")
    # A hash-table set: effort is its member count; 64 stays inline, 65 goes.
    for i in range(64):
        s.cmd("SADD", "s64", "m%d" % i)
    for i in range(65):
        s.cmd("SADD", "s65", "m%d" % i)
    assert s.cmd("OBJECT", "ENCODING", "s64") == b"hashtable"
    assert s.cmd("UNLINK", "s64") == 1
    s.wait_idle()
    assert s.freed() == 0
    assert s.cmd("UNLINK", "s65") == 1
    s.wait_idle()
    assert s.freed() == 1
    # A quicklist: effort is its node count (one element per node here).
    s.cmd("RPUSH", "l64", *["e%d" % i for i in range(64)])
    s.cmd("RPUSH", "l65", *["e%d" % i for i in range(65)])
    assert s.cmd("OBJECT", "ENCODING", "l65") == b"quicklist"
    assert s.cmd("UNLINK", "l64") == 1
    s.wait_idle()
    assert s.freed() == 1
    assert s.cmd("UNLINK", "l65") == 1
    s.wait_idle()
    assert s.freed() == 2
    # Strings and listpack-encoded values are one allocation.
    s.cmd("SET", "str", "x" * 100_000)
    s.cmd("HSET", "h", "f", "v")
    s.cmd("ZADD", "z", "1", "a")
    assert s.cmd("UNLINK", "str", "h", "z") == 3
    s.wait_idle()
    assert s.freed() == 2


def test_del_follows_lazyfree_lazy_user_del(lz):
    s = lz()
    s.cmd("CONFIG", "SET", "lazyfree-lazy-user-del", "no")
    s.fill("hash", "h", BIG)
    assert s.cmd("DEL", "h") == 1
    assert s.pending() == 0
    assert s.freed() == 0
    # UNLINK does not depend on the setting.
    s.fill("hash", "h", 1000)
    assert s.cmd("UNLINK", "h") == 1
    s.wait_idle()
    assert s.freed() == 1
    s.cmd("CONFIG", "SET", "lazyfree-lazy-user-del", "yes")
    s.fill("hash", "h", BIG)
    assert s.cmd("DEL", "h") == 1
    s.wait_idle()
    assert s.freed() == 2


def test_server_keeps_answering_while_freeing(lz):
    s = lz()
    keys = ["big%d" % i for i in range(10)]
    for k in keys:
        s.fill("set", k, BIG, prefix=k + ":")
    base_freed = s.freed()
    other = RespConn(s.srv.host, s.srv.port, timeout=10)
    unlinker = RespConn(s.srv.host, s.srv.port, timeout=10)
    t0 = time.time()
    # INFO in the same request as UNLINK: it runs right after it, while a
    # million members are still being released in the background.
    unlinker.send(encode("UNLINK", *keys) + encode("INFO", "memory"))
    assert unlinker.read() == len(keys)
    unlink_took = time.time() - t0
    raw = unlinker.read().decode()
    pending = int(raw.split("lazyfree_pending_objects:")[1].split("\r\n")[0])
    assert pending > 0
    # Another client is served meanwhile.
    t1 = time.time()
    assert other.cmd("PING") == "PONG"
    ping_took = time.time() - t1
    assert other.cmd("SET", "k", "v") == "OK"
    assert other.cmd("GET", "k") == b"v"
    s.wait_idle()
    assert s.freed() == base_freed + len(keys)
    assert unlink_took < 5 and ping_took < 5
    other.close()
    unlinker.close()


# ---- FLUSHALL / FLUSHDB ------------------------------------------------------


def test_flushall_async_frees_in_background(lz):
    s = lz()
    base = s.used()
    for i in range(3):
        s.fill("zset", "z%d" % i, BIG // 2, prefix="z%d:" % i)
    s.cmd("SELECT", "3")
    for i in range(500):
        s.cmd("SET", "s%d" % i, "v")
    s.cmd("SELECT", "0")
    peak = s.used()
    other = RespConn(s.srv.host, s.srv.port, timeout=10)
    assert s.cmd("FLUSHALL", "ASYNC") == "OK"
    assert other.cmd("PING") == "PONG"
    assert s.cmd("DBSIZE") == 0
    s.cmd("SELECT", "3")
    assert s.cmd("DBSIZE") == 0
    s.cmd("SELECT", "0")
    # Keys written after the flush are untouched by it.
    assert s.cmd("SET", "after", "1") == "OK"
    s.wait_idle()
    assert s.freed() == 503  # every key of the detached tables
    assert s.cmd("GET", "after") == b"1"
    assert s.used() < base + (peak - base) // 10
    other.close()


def test_flushdb_async_only_that_db(lz):
    s = lz()
    s.fill("list", "l", BIG)
    s.cmd("SET", "x", "1")
    s.cmd("SELECT", "1")
    s.cmd("SET", "y", "1")
    s.cmd("SELECT", "0")
    assert s.cmd("FLUSHDB", "ASYNC") == "OK"
    assert s.cmd("DBSIZE") == 0
    s.wait_idle()
    assert s.freed() == 2
    s.cmd("SELECT", "1")
    assert s.cmd("GET", "y") == b"1"


def test_flush_sync_and_default(lz):
    s = lz()
    s.fill("set", "s", BIG)
    # SYNC is Redis 7.4's blocking ASYNC flush: the lazy free thread frees,
    # the reply comes once it has, and the keys count as lazily freed.
    assert s.cmd("FLUSHALL", "SYNC") == "OK"
    assert s.cmd("DBSIZE") == 0
    assert s.pending() == 0
    assert s.freed() == 1
    s.fill("set", "s", 2000)
    assert s.cmd("FLUSHDB", "sync") == "OK"
    assert s.pending() == 0
    assert s.freed() == 2
    # No argument: lazyfree-lazy-user-flush (on here) decides.
    s.fill("set", "s", 2000)
    s.cmd("SET", "t", "v")
    assert s.cmd("FLUSHALL") == "OK"
    s.wait_idle()
    assert s.freed() == 4
    s.cmd("CONFIG", "SET", "lazyfree-lazy-user-flush", "no")
    s.fill("set", "s", 2000)
    assert s.cmd("FLUSHALL") == "OK"
    assert s.cmd("FLUSHDB") == "OK"
    assert s.pending() == 0
    assert s.freed() == 5
    s.cmd("CONFIG", "SET", "lazyfree-lazy-user-flush", "yes")
    s.fill("set", "s", 2000)
    assert s.cmd("FLUSHDB") == "OK"
    s.wait_idle()
    assert s.freed() == 6


def test_flush_syntax(lz):
    s = lz()
    syntax = Error("ERR syntax error")
    for cmd in ("FLUSHALL", "FLUSHDB"):
        assert s.cmd(cmd, "LAZY") == syntax
        assert s.cmd(cmd, "ASYNC", "SYNC") == syntax
        assert s.cmd(cmd, "async") == "OK"


# ---- expiry --------------------------------------------------------------------


def test_lazy_expire_on_access(lz):
    s = lz("--enable-debug-command", "yes")
    assert s.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "0") == "OK"
    s.cmd("CONFIG", "SET", "lazyfree-lazy-expire", "no")
    s.fill("zset", "z", BIG)
    assert s.cmd("PEXPIRE", "z", "20") == 1
    time.sleep(0.1)
    assert s.cmd("EXISTS", "z") == 0
    assert s.pending() == 0 and s.freed() == 0
    s.cmd("CONFIG", "SET", "lazyfree-lazy-expire", "yes")
    s.fill("zset", "z", BIG)
    assert s.cmd("PEXPIRE", "z", "20") == 1
    time.sleep(0.1)
    assert s.cmd("ZCARD", "z") == 0
    s.wait_idle()
    assert s.freed() == 1


def test_active_expire(lz):
    s = lz("--hz", "100")
    s.cmd("CONFIG", "SET", "lazyfree-lazy-expire", "no")
    s.fill("hash", "h", BIG)
    assert s.cmd("PEXPIRE", "h", "20") == 1
    deadline = time.time() + 30
    while "db0:" in s.cmd("INFO", "keyspace").decode():
        assert time.time() < deadline
        time.sleep(0.02)
    assert s.freed() == 0
    s.cmd("CONFIG", "SET", "lazyfree-lazy-expire", "yes")
    base = s.used()
    s.fill("hash", "h", BIG)
    assert s.cmd("PEXPIRE", "h", "20") == 1
    deadline = time.time() + 30
    while s.freed() == 0:
        assert time.time() < deadline
        time.sleep(0.02)
    s.wait_idle()
    assert s.cmd("EXISTS", "h") == 0
    assert s.used() < base + 1_000_000


# ---- implicit deletes: overwrite, RENAME, MOVE, SWAPDB -------------------------


def test_overwrite_follows_lazyfree_lazy_server_del(lz):
    s = lz()
    s.cmd("CONFIG", "SET", "lazyfree-lazy-server-del", "no")
    s.fill("list", "k", BIG)
    assert s.cmd("SET", "k", "v") == "OK"
    assert s.freed() == 0 and s.pending() == 0
    s.cmd("CONFIG", "SET", "lazyfree-lazy-server-del", "yes")
    s.fill("list", "l", BIG)
    assert s.cmd("SET", "l", "v") == "OK"
    assert s.cmd("GET", "l") == b"v"
    s.wait_idle()
    assert s.freed() == 1
    # RENAME onto a big value frees the destination's old value.
    s.fill("hash", "dst", BIG)
    s.cmd("SET", "src", "new")
    assert s.cmd("RENAME", "src", "dst") == "OK"
    assert s.cmd("GET", "dst") == b"new"
    s.wait_idle()
    assert s.freed() == 2
    # A store command replacing a big value.
    s.fill("set", "a", BIG)
    s.cmd("SADD", "b", "x")
    assert s.cmd("SUNIONSTORE", "a", "b") == 1
    s.wait_idle()
    assert s.freed() == 3
    # COPY ... REPLACE onto a big value.
    s.fill("list", "big", BIG)
    s.cmd("SET", "small", "x")
    assert s.cmd("COPY", "small", "big", "REPLACE") == 1
    assert s.cmd("GET", "big") == b"x"
    s.wait_idle()
    assert s.freed() == 4
    s.cmd("CONFIG", "SET", "lazyfree-lazy-server-del", "no")
    s.fill("zset", "z", BIG)
    s.cmd("SET", "src", "new")
    assert s.cmd("RENAME", "src", "z") == "OK"
    assert s.freed() == 4 and s.pending() == 0


def test_move_and_swapdb_free_nothing(lz):
    s = lz()
    s.fill("set", "s", BIG)
    assert s.cmd("MOVE", "s", "1") == 1
    assert s.cmd("SWAPDB", "0", "1") == "OK"
    assert s.cmd("SCARD", "s") == BIG
    s.fill("set", "t", 2000)
    s.cmd("SELECT", "2")
    s.cmd("SET", "t", "x")
    s.cmd("SELECT", "0")
    assert s.cmd("MOVE", "t", "2") == 0  # the target exists: nothing moves
    assert s.cmd("SCARD", "t") == 2000
    assert s.freed() == 0 and s.pending() == 0


def test_resetstat(lz):
    s = lz()
    s.fill("set", "s", BIG)
    assert s.cmd("UNLINK", "s") == 1
    s.wait_idle()
    assert s.freed() == 1
    assert s.cmd("CONFIG", "RESETSTAT") == "OK"
    assert s.freed() == 0
    assert s.pending() == 0


def test_concurrent_unlinks_and_writes(lz):
    """Several clients create and unlink big values while others write:
    every value is freed exactly once and the server stays consistent."""
    s = lz()
    conns = [RespConn(s.srv.host, s.srv.port, timeout=60) for _ in range(4)]
    rounds = 5
    for r in range(rounds):
        for i, c in enumerate(conns):
            key = "{t%d}big" % i
            c.send(b"".join(
                encode("SADD", key, *["m%d" % j for j in range(k, k + 1000)])
                for k in range(0, 20_000, 1000)))
        for c in conns:
            for _ in range(20):
                assert c.read() == 1000
        for i, c in enumerate(conns):
            c.send(encode("UNLINK", "{t%d}big" % i))
        for c in conns:
            assert c.read() == 1
    s.wait_idle()
    assert s.freed() == rounds * len(conns)
    assert s.cmd("DBSIZE") == 0
    for c in conns:
        c.close()


def test_shutdown_with_pending_frees(lz):
    """Values still queued at shutdown are freed before exit (the ASan
    build reports a leak otherwise)."""
    s = lz()
    for i in range(3):
        s.fill("list", "l%d" % i, BIG, prefix="%d:" % i)
    s.cmd("UNLINK", "l0", "l1", "l2")
    s.cmd("FLUSHALL", "ASYNC")
    try:
        s.cmd("SHUTDOWN", "NOSAVE")
    except (ConnectionError, OSError, socket.error):
        pass
    s.srv.proc.wait(30)
    assert s.srv.proc.returncode == 0
