"""Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH, as Redis has them.

- MULTI answers +OK; every later command is checked (known? right arity?)
  and queued (+QUEUED) instead of run, except MULTI, EXEC, DISCARD, WATCH,
  QUIT and RESET, which act at once. EXEC runs the queue with nothing else
  in between and answers an array of each command's reply, in place; an
  error at run time is one element of that array and the rest still runs.
- A command refused while queueing (unknown command or subcommand, wrong
  arity, a no-multi command) gets its error at once and marks the
  transaction: EXEC then answers -EXECABORT and discards it. Nested MULTI
  and WATCH inside MULTI are errors that do not mark it.
- WATCH: EXEC answers a null array (RESP2 *-1, RESP3 _) instead of running
  when a watched key changed after the WATCH, by anyone (this connection
  too) and by any means (writes, DEL, EXPIRE, expiry, FLUSHDB/FLUSHALL of a
  key that existed, SWAPDB, RENAME and MOVE at either end). Reads and
  writes that change nothing do not count. EXEC, DISCARD, UNWATCH and
  RESET forget the watches. A key is watched in the db selected at WATCH.
- Blocking commands inside a transaction answer as their non-blocking form.

Byte-for-byte replies are those of Redis 7.0 and 8.x alike, checked with
`--host/--port` against Debian's redis-server 7.0 (and against a stock
redis-server by test_same_bytes_as_real_redis). Tests marked @redis8 check
what Redis 7.4/8.x added (INFO watching_clients / total_watched_keys,
CLIENT LIST watch=, dropping the watches of a client already doomed): they
are skipped when the external server's INFO redis_version starts with 7.

The concurrency tests at the end start a private server with 4 workers (or
use the external server under --host): N accounts keep their total under
WATCH-guarded transfers, counters incremented in MULTI/EXEC end exact, and
readers never see a transaction half applied.
"""
import binascii
import random
import threading
import time

import pytest
import redis

from resp import Error, RespConn, Simple, encode

OK = Simple("OK")
QUEUED = Simple("QUEUED")
PONG = Simple("PONG")
EXECABORT = Error("EXECABORT Transaction discarded because of previous errors.")
NESTED = Error("ERR MULTI calls can not be nested")
EXEC_WITHOUT_MULTI = Error("ERR EXEC without MULTI")
DISCARD_WITHOUT_MULTI = Error("ERR DISCARD without MULTI")
WATCH_IN_MULTI = Error("ERR WATCH inside MULTI is not allowed")
NO_MULTI = Error("ERR Command not allowed inside a transaction")
WRONGTYPE = Error("WRONGTYPE Operation against a key holding the wrong kind of value")
NOT_INT = Error("ERR value is not an integer or out of range")
DB_RANGE = Error("ERR DB index is out of range")


def arity(name):
    return Error("ERR wrong number of arguments for '%s' command" % name)


def unknown(name, *args):
    return Error("ERR unknown command '%s', with args beginning with: %s" % (name, "".join("'%s' " % a for a in args)))


# ---- helpers ---------------------------------------------------------------------


def server_version(server):
    c = server.client()
    try:
        return str(c.info("server").get("redis_version", ""))
    finally:
        c.close()


def redis8(reason):
    """Marks a test of behaviour Redis 7.x lacks: skipped when the suite runs
    against an external server (--host) whose INFO redis_version starts
    with 7. `reason` is what Redis 7.x does not have."""
    def deco(fn):
        fn._redis8_reason = reason
        return pytest.mark.usefixtures("_not_redis7")(fn)
    return deco


@pytest.fixture
def _not_redis7(request, server):
    if request.config.getoption("--host") is None:
        return
    ver = server_version(server)
    if ver.startswith("7"):
        pytest.skip("external Redis %s: %s" % (ver, getattr(request.function, "_redis8_reason", "Redis 8 only")))


@pytest.fixture
def o(server, r):
    """A second connection (RESP2, db 0): the 'other client'."""
    c = server.conn()
    yield c
    c.close()


@pytest.fixture
def mt_server(request, server):
    """A private server with 4 workers, or the external server (flushed)
    under --host, so that these tests also run against real Redis."""
    if request.config.getoption("--host"):
        c = server.client()
        c.flushall()
        c.close()
        return server
    return request.getfixturevalue("new_server")(threads=4)


def tx(c, *cmds):
    """MULTI, each command (each must answer +QUEUED), EXEC: EXEC's reply."""
    assert c.cmd("MULTI") == OK
    for args in cmds:
        assert c.cmd(*args) == QUEUED, args
    return c.cmd("EXEC")


def tx_raw(c, *cmds):
    assert c.cmd("MULTI") == OK
    for args in cmds:
        assert c.cmd(*args) == QUEUED, args
    return c.cmd_raw("EXEC")


def client_row(c, cid):
    """CLIENT LIST's fields for one client id, as a dict of strings."""
    line = c.cmd("CLIENT", "LIST", "ID", str(cid))
    assert isinstance(line, bytes), line
    rows = [ln for ln in line.decode().split("\n") if ln]
    assert len(rows) == 1, rows
    return dict(p.split("=", 1) for p in rows[0].split(" "))


def wait_for(pred, timeout=5.0):
    deadline = time.time() + timeout
    while True:
        v = pred()
        if v or time.time() > deadline:
            return v
        time.sleep(0.02)


def crc16_slot(key):
    k = key.encode() if isinstance(key, str) else key
    s = k.find(b"{")
    if s >= 0:
        e = k.find(b"}", s + 1)
        if e > s + 1:
            k = k[s + 1:e]
    return binascii.crc_hqx(k, 0) % 16384


def keys_in_distinct_slots(prefix, n):
    """n keys whose slots differ modulo 16: different shards for any
    power-of-two shard count of 16 or more."""
    keys, seen, i = [], set(), 0
    while len(keys) < n:
        k = "%s%d" % (prefix, i)
        if crc16_slot(k) % 16 not in seen:
            seen.add(crc16_slot(k) % 16)
            keys.append(k)
        i += 1
    return keys


def run_threads(n, target):
    errors = []

    def wrap(i):
        try:
            target(i)
        except Exception as e:  # reported by the main thread
            errors.append(e)

    ts = [threading.Thread(target=wrap, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert not any(t.is_alive() for t in ts), "threads hung"
    if errors:
        raise errors[0]


# ---- MULTI / EXEC / DISCARD ---------------------------------------------------------


def test_multi_exec_replies_in_place(conn):
    assert conn.cmd_raw("MULTI") == b"+OK\r\n"
    assert conn.cmd_raw("SET", "k", "v") == b"+QUEUED\r\n"
    for args in (("GET", "k"), ("INCR", "n"), ("INCR", "n"), ("LPUSH", "l", "a", "b"), ("LRANGE", "l", "0", "-1"),
                 ("GET", "missing"), ("INCR", "l"), ("PING",), ("ECHO", "hi")):
        assert conn.cmd_raw(*args) == b"+QUEUED\r\n", args
    assert conn.cmd_raw("EXEC") == (
        b"*10\r\n+OK\r\n$1\r\nv\r\n:1\r\n:2\r\n:2\r\n*2\r\n$1\r\nb\r\n$1\r\na\r\n$-1\r\n"
        b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n+PONG\r\n$2\r\nhi\r\n")
    # Out of the transaction again: commands run at once.
    assert conn.cmd("GET", "k") == b"v"
    assert conn.cmd("GET", "n") == b"2"
    assert conn.cmd("EXEC") == EXEC_WITHOUT_MULTI


def test_empty_transaction(conn, conn3):
    assert conn.cmd("MULTI") == OK
    assert conn.cmd_raw("EXEC") == b"*0\r\n"
    assert conn3.cmd("MULTI") == OK
    assert conn3.cmd_raw("EXEC") == b"*0\r\n"
    assert conn.cmd("EXEC") == EXEC_WITHOUT_MULTI


def test_queued_commands_run_at_exec_not_before(conn, o):
    o.cmd("SET", "k", "old")
    assert conn.cmd("MULTI") == OK
    assert conn.cmd("SET", "w", "1") == QUEUED
    assert conn.cmd("GET", "k") == QUEUED
    # Nothing ran yet: the other client sees no w, and its write to k is
    # what the queued GET will read.
    assert o.cmd("GET", "w") is None
    assert o.cmd("SET", "k", "new") == OK
    assert conn.cmd("EXEC") == [OK, b"new"]
    assert o.cmd("GET", "w") == b"1"


def test_discard(conn, o):
    conn.cmd("SET", "k", "before")
    assert conn.cmd("MULTI") == OK
    assert conn.cmd("SET", "k", "after") == QUEUED
    assert conn.cmd("DEL", "k") == QUEUED
    assert conn.cmd_raw("DISCARD") == b"+OK\r\n"
    assert conn.cmd("GET", "k") == b"before"
    assert o.cmd("GET", "k") == b"before"
    # The state is gone: no EXEC, no second DISCARD, and a new MULTI works.
    assert conn.cmd("EXEC") == EXEC_WITHOUT_MULTI
    assert conn.cmd("DISCARD") == DISCARD_WITHOUT_MULTI
    assert tx(conn, ("GET", "k")) == [b"before"]


def test_runtime_errors_come_back_in_place_and_the_rest_runs(conn):
    conn.cmd("RPUSH", "list", "x")
    conn.cmd("SET", "str", "abc")
    reply = tx(conn,
               ("INCR", "list"),             # WRONGTYPE at run time
               ("SET", "a", "1"),
               ("INCR", "str"),              # not an integer
               ("SET", "b", "2", "EX", "x"),  # option values are checked at run time
               ("SELECT", "99999"),          # so is a db index
               ("LPUSH", "str", "y"),
               ("INCR", "a"),
               ("MGET", "a", "b", "list"))
    assert reply == [WRONGTYPE, OK, NOT_INT, NOT_INT, DB_RANGE, WRONGTYPE, 2, [b"2", None, None]]
    assert conn.cmd("GET", "a") == b"2"
    assert conn.cmd("EXISTS", "b") == 0
    assert conn.cmd("LRANGE", "list", "0", "-1") == [b"x"]


def test_command_rewriting_its_arguments_inside_exec(conn):
    # SPOP is replicated as SREM/DEL: the reply is still SPOP's.
    conn.cmd("SADD", "myset", "a")
    assert tx(conn, ("SPOP", "myset")) == [b"a"]
    assert conn.cmd("EXISTS", "myset") == 0
    # SET EX is propagated with an absolute time; the reply is OK.
    assert tx(conn, ("SET", "k", "v", "EX", "100"), ("TTL", "k")) == [OK, 100]


def test_unknown_command_aborts_the_transaction(conn, o):
    assert conn.cmd("MULTI") == OK
    assert conn.cmd("SET", "a", "1") == QUEUED
    assert conn.cmd("NOSUCHCMD", "x", "y") == unknown("NOSUCHCMD", "x", "y")
    # Later commands are still answered QUEUED...
    assert conn.cmd("SET", "b", "2") == QUEUED
    # ...but EXEC discards everything.
    assert conn.cmd_raw("EXEC") == b"-EXECABORT Transaction discarded because of previous errors.\r\n"
    assert o.cmd("EXISTS", "a", "b") == 0
    assert conn.cmd("EXEC") == EXEC_WITHOUT_MULTI
    assert conn.cmd("PING") == PONG


def test_wrong_arity_aborts_the_transaction(conn, o):
    assert conn.cmd("MULTI") == OK
    assert conn.cmd("SET", "a", "1") == QUEUED
    assert conn.cmd("GET") == arity("get")
    assert conn.cmd("SET", "k") == arity("set")
    assert conn.cmd("EXEC") == EXECABORT
    assert o.cmd("EXISTS", "a") == 0
    assert conn.cmd("EXEC") == EXEC_WITHOUT_MULTI
    # The same through the other transaction commands' arity.
    for bad, name in ((("MULTI", "x"), "multi"), (("DISCARD", "x"), "discard"), (("WATCH",), "watch"),
                      (("UNWATCH", "x"), "unwatch")):
        assert conn.cmd("MULTI") == OK
        assert conn.cmd("SET", "a", "1") == QUEUED
        assert conn.cmd(*bad) == arity(name), bad
        assert conn.cmd("EXEC") == EXECABORT, bad
        assert o.cmd("EXISTS", "a") == 0


def test_unknown_subcommand_aborts_the_transaction(conn, o):
    assert conn.cmd("MULTI") == OK
    assert conn.cmd("SET", "a", "1") == QUEUED
    assert conn.cmd("CLIENT", "NOSUCH") == Error("ERR unknown subcommand 'NOSUCH'. Try CLIENT HELP.")
    assert conn.cmd("EXEC") == EXECABORT
    assert o.cmd("EXISTS", "a") == 0


def test_exec_with_arguments(conn, o):
    # EXEC refused for its arity ends the transaction with an EXECABORT
    # that carries the reason (inside MULTI or not).
    abort = Error("EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command")
    assert conn.cmd("MULTI") == OK
    assert conn.cmd("SET", "a", "1") == QUEUED
    assert conn.cmd("EXEC", "now") == abort
    assert o.cmd("EXISTS", "a") == 0
    assert conn.cmd("EXEC") == EXEC_WITHOUT_MULTI
    assert conn.cmd("EXEC", "now") == abort


def test_transaction_commands_outside_multi(conn):
    assert conn.cmd_raw("EXEC") == b"-ERR EXEC without MULTI\r\n"
    assert conn.cmd_raw("DISCARD") == b"-ERR DISCARD without MULTI\r\n"
    assert conn.cmd("MULTI", "x") == arity("multi")
    assert conn.cmd("DISCARD", "x") == arity("discard")
    assert conn.cmd("WATCH") == arity("watch")
    assert conn.cmd("UNWATCH", "x") == arity("unwatch")
    assert conn.cmd("UNWATCH") == OK          # nothing watched: fine
    assert conn.cmd("WATCH", "a", "b", "a") == OK


def test_nested_multi_is_an_error_that_keeps_the_transaction(conn):
    assert conn.cmd("MULTI") == OK
    assert conn.cmd("SET", "a", "1") == QUEUED
    assert conn.cmd_raw("MULTI") == b"-ERR MULTI calls can not be nested\r\n"
    assert conn.cmd("SET", "b", "2") == QUEUED
    assert conn.cmd("EXEC") == [OK, OK]
    assert conn.cmd("MGET", "a", "b") == [b"1", b"2"]


def test_watch_inside_multi_is_an_error_that_keeps_the_transaction(conn, o):
    o.cmd("SET", "x", "1")
    assert conn.cmd("MULTI") == OK
    assert conn.cmd_raw("WATCH", "x") == b"-ERR WATCH inside MULTI is not allowed\r\n"
    assert conn.cmd("SET", "y", "1") == QUEUED
    # The refused WATCH watched nothing: a write to x does not abort.
    o.cmd("SET", "x", "2")
    assert conn.cmd("EXEC") == [OK]
    assert conn.cmd("GET", "y") == b"1"


def test_unwatch_inside_multi_is_queued(conn):
    assert tx(conn, ("UNWATCH",), ("PING",)) == [OK, PONG]


def test_no_multi_command_is_refused_and_aborts(mt_server):
    # SHUTDOWN is flagged no-multi: refused at queue time, the server keeps
    # running (a private server here, the external one under --host).
    c = mt_server.conn()
    try:
        assert c.cmd("MULTI") == OK
        assert c.cmd("SET", "a", "1") == QUEUED
        assert c.cmd("SHUTDOWN") == NO_MULTI
        assert c.cmd("SET", "b", "1") == QUEUED
        assert c.cmd("EXEC") == EXECABORT
        assert c.cmd("EXISTS", "a", "b") == 0
        assert c.cmd("PING") == PONG
    finally:
        c.close()


def test_reset_leaves_multi_and_forgets_watches(conn, o):
    conn.cmd("SET", "x", "1")
    assert conn.cmd("WATCH", "x") == OK
    o.cmd("SET", "x", "2")
    assert conn.cmd("MULTI") == OK
    assert conn.cmd("SET", "a", "1") == QUEUED
    assert conn.cmd("RESET") == Simple("RESET")
    assert conn.cmd("EXEC") == EXEC_WITHOUT_MULTI
    assert conn.cmd("EXISTS", "a") == 0
    # The dirty watch went with it.
    assert tx(conn, ("PING",)) == [PONG]


def test_pipelined_transaction(conn):
    cmds = [("MULTI",), ("SET", "p", "1"), ("INCR", "p"), ("GET", "p"), ("EXEC",), ("GET", "p")]
    conn.send(b"".join(encode(*c) for c in cmds))
    assert [conn.raw() for _ in cmds] == [b"+OK\r\n", b"+QUEUED\r\n", b"+QUEUED\r\n", b"+QUEUED\r\n",
                                          b"*3\r\n+OK\r\n:2\r\n$1\r\n2\r\n", b"$1\r\n2\r\n"]


def test_large_transaction(conn):
    n = 2000
    batch = [encode("MULTI")] + [encode("RPUSH", "big", str(i)) for i in range(n)] + [encode("EXEC")]
    conn.send(b"".join(batch))
    assert conn.read() == OK
    for _ in range(n):
        assert conn.read() == QUEUED
    assert conn.read() == list(range(1, n + 1))
    assert conn.cmd("LLEN", "big") == n


def test_disconnect_inside_multi_runs_nothing(server, conn):
    c = server.conn()
    assert c.cmd("MULTI") == OK
    assert c.cmd("SET", "a", "1") == QUEUED
    c.close()
    time.sleep(0.1)
    assert conn.cmd("EXISTS", "a") == 0


# ---- SELECT and blocking commands inside MULTI -----------------------------------------


def test_select_inside_multi_applies_to_the_rest_and_sticks(server, conn, o):
    cid = o.cmd("CLIENT", "ID")
    o.cmd("SET", "k", "db0")
    assert tx(o, ("SELECT", "1"), ("SET", "k", "db1"), ("GET", "k"), ("SELECT", "2"), ("GET", "k"),
              ("SELECT", "1")) == [OK, OK, b"db1", OK, None, OK]
    # The connection stays in db 1 after EXEC.
    assert o.cmd("GET", "k") == b"db1"
    assert client_row(conn, cid)["db"] == "1"
    assert conn.cmd("GET", "k") == b"db0"
    # A failed SELECT inside leaves the db as it was for the rest.
    assert tx(o, ("SELECT", "0"), ("SELECT", "99999"), ("GET", "k")) == [OK, DB_RANGE, b"db0"]
    assert client_row(conn, cid)["db"] == "0"
    # A discarded SELECT changes nothing.
    assert o.cmd("MULTI") == OK
    assert o.cmd("SELECT", "1") == QUEUED
    assert o.cmd("DISCARD") == OK
    assert o.cmd("GET", "k") == b"db0"


BLOCKING = [
    (("BLPOP", "e1", "0"), b"*-1\r\n"),
    (("BRPOP", "e1", "e2", "0"), b"*-1\r\n"),
    (("BRPOPLPUSH", "e1", "e2", "0"), b"$-1\r\n"),
    (("BLMOVE", "e1", "e2", "LEFT", "RIGHT", "0"), b"$-1\r\n"),
    (("BLMPOP", "0", "1", "e1", "LEFT"), b"*-1\r\n"),
    (("BZPOPMIN", "z1", "0"), b"*-1\r\n"),
    (("BZPOPMAX", "z1", "0"), b"*-1\r\n"),
    (("BZMPOP", "0", "1", "z1", "MIN"), b"*-1\r\n"),
]


@pytest.mark.parametrize("args,nil", BLOCKING, ids=[b[0][0] for b in BLOCKING])
def test_blocking_command_in_multi_does_not_block(conn, conn3, args, nil):
    t0 = time.time()
    assert tx_raw(conn, args) == b"*1\r\n" + nil
    assert tx_raw(conn3, args) == b"*1\r\n_\r\n"
    assert time.time() - t0 < 2
    assert conn.cmd("DBSIZE") == 0


def test_blocking_commands_in_multi_serve_what_is_there(conn):
    t0 = time.time()
    assert tx(conn, ("RPUSH", "l", "a", "b"), ("BLPOP", "l", "0"), ("BLMOVE", "l", "m", "LEFT", "LEFT", "0"),
              ("BLPOP", "l", "0"), ("ZADD", "z", "1", "x"), ("BZPOPMIN", "z", "0"), ("BZPOPMIN", "z", "0"),
              ("BRPOP", "m", "0")) == [2, [b"l", b"a"], b"b", None, 1, [b"z", b"x", b"1"], None, [b"m", b"b"]]
    assert time.time() - t0 < 2
    assert conn.cmd("DBSIZE") == 0


# ---- WATCH ------------------------------------------------------------------------


def test_watch_aborts_when_another_client_writes(conn, o):
    conn.cmd("SET", "x", "1")
    assert conn.cmd_raw("WATCH", "x") == b"+OK\r\n"
    assert o.cmd("SET", "x", "2") == OK
    assert conn.cmd("MULTI") == OK
    assert conn.cmd("SET", "x", "mine") == QUEUED
    assert conn.cmd("SET", "other", "1") == QUEUED
    assert conn.cmd_raw("EXEC") == b"*-1\r\n"
    # Nothing of the transaction ran.
    assert conn.cmd("GET", "x") == b"2"
    assert conn.cmd("EXISTS", "other") == 0
    # The connection is out of MULTI and watches nothing now.
    assert conn.cmd("EXEC") == EXEC_WITHOUT_MULTI
    o.cmd("SET", "x", "3")
    assert tx(conn, ("GET", "x")) == [b"3"]


def test_watch_aborts_with_null_in_resp3(conn3, o):
    conn3.cmd("SET", "x", "1")
    assert conn3.cmd("WATCH", "x") == OK
    o.cmd("SET", "x", "2")
    assert tx_raw(conn3, ("PING",)) == b"_\r\n"
    assert tx_raw(conn3, ("PING",)) == b"*1\r\n+PONG\r\n"


def test_watch_not_aborted_when_modified_before_watch(conn, o):
    o.cmd("SET", "x", "1")
    o.cmd("SET", "x", "2")
    assert conn.cmd("WATCH", "x") == OK
    assert tx(conn, ("GET", "x"), ("SET", "x", "3")) == [b"2", OK]
    assert conn.cmd("GET", "x") == b"3"


def test_watch_not_aborted_by_writes_to_other_keys(conn, o):
    conn.cmd("SET", "x", "1")
    assert conn.cmd("WATCH", "x") == OK
    o.cmd("SET", "y", "1")
    o.cmd("SET", "x2", "1")
    o.cmd("DEL", "y")
    # Same slot (hash tag), different key.
    conn.cmd("SET", "{t}a", "1")
    assert conn.cmd("WATCH", "{t}a") == OK
    o.cmd("SET", "{t}b", "2")
    o.cmd("LPUSH", "{t}c", "x")
    assert tx(conn, ("PING",)) == [PONG]


def test_watch_then_own_write_before_multi_aborts(conn):
    conn.cmd("SET", "x", "1")
    assert conn.cmd("WATCH", "x") == OK
    conn.cmd("SET", "x", "2")
    assert tx(conn, ("GET", "x")) is None


def test_watch_own_reads_and_own_writes_inside_the_transaction_do_not_abort(conn):
    conn.cmd("SET", "x", "1")
    assert conn.cmd("WATCH", "x") == OK
    assert conn.cmd("GET", "x") == b"1"
    assert conn.cmd("EXISTS", "x") == 1
    assert tx(conn, ("SET", "x", "5"), ("INCR", "x"), ("GET", "x")) == [OK, 6, b"6"]


def test_watch_missing_key_created_by_other_client(conn, o):
    assert conn.cmd("WATCH", "nokey") == OK
    assert o.cmd("SET", "nokey", "now") == OK
    assert tx(conn, ("GET", "nokey")) is None
    # Created and deleted again before EXEC: still a change.
    assert conn.cmd("WATCH", "nokey2") == OK
    o.cmd("SET", "nokey2", "1")
    o.cmd("DEL", "nokey2")
    assert tx(conn, ("PING",)) is None


def test_watch_missing_key_still_missing(conn, o):
    assert conn.cmd("WATCH", "nokey") == OK
    assert o.cmd("DEL", "nokey") == 0
    assert o.cmd("GET", "nokey") is None
    assert tx(conn, ("SET", "nokey", "v")) == [OK]


def test_watch_aborted_by_del(conn, o):
    conn.cmd("SET", "x", "1")
    assert conn.cmd("WATCH", "x") == OK
    assert o.cmd("DEL", "x") == 1
    assert tx(conn, ("PING",)) is None


def test_watch_aborted_by_expire_command(conn, o):
    conn.cmd("SET", "x", "1")
    assert conn.cmd("WATCH", "x") == OK
    assert o.cmd("PEXPIRE", "x", "100000") == 1
    assert tx(conn, ("PING",)) is None
    # An expire time in the past deletes the key: also a change.
    conn.cmd("SET", "y", "1")
    assert conn.cmd("WATCH", "y") == OK
    assert o.cmd("EXPIRE", "y", "0") == 1
    assert tx(conn, ("PING",)) is None


def watch_volatile(c, key, ttl_ms):
    """SET key with a TTL and WATCH it while it is still alive (PTTL, a
    read, proves the WATCH came first even on a slow build)."""
    for _ in range(5):
        c.cmd("SET", key, "1", "PX", str(ttl_ms))
        assert c.cmd("WATCH", key) == OK
        if c.cmd("PTTL", key) > 0:
            return
        assert c.cmd("UNWATCH") == OK
    pytest.fail("could not WATCH %s before it expired" % key)


def test_watch_aborted_by_active_expiry(conn, o):
    watch_volatile(conn, "x", 100)
    # Nobody touches x: the server's own expiry cycle deletes it.
    assert wait_for(lambda: o.cmd("DBSIZE") == 0), "x was not expired"
    assert tx(conn, ("PING",)) is None


def test_watch_aborted_when_key_expires_without_being_accessed(conn):
    # The key is past its TTL at EXEC and nobody read it (the active cycle
    # may or may not have deleted it): EXEC fails either way, and the queued
    # INCR does not run on a fresh key.
    for _ in range(3):
        watch_volatile(conn, "x", 100)
        time.sleep(0.2)
        assert tx(conn, ("INCR", "x")) is None
        assert conn.cmd("EXISTS", "x") == 0


def test_watch_aborted_when_other_client_finds_the_key_expired(conn, o):
    watch_volatile(conn, "x", 100)
    time.sleep(0.2)
    assert o.cmd("GET", "x") is None
    assert tx(conn, ("PING",)) is None


def test_watch_of_already_expired_key(conn, o):
    # A key already past its TTL when WATCH runs is a missing key: its
    # deletion afterwards is no change.
    conn.cmd("SET", "x", "1", "PX", "1")
    time.sleep(0.05)
    assert conn.cmd("WATCH", "x") == OK
    assert tx(conn, ("PING",)) == [PONG]
    conn.cmd("SET", "x", "1", "PX", "1")
    time.sleep(0.05)
    assert conn.cmd("WATCH", "x") == OK
    assert o.cmd("EXISTS", "x") == 0
    assert tx(conn, ("PING",)) == [PONG]
    # Created again after the WATCH: a change.
    conn.cmd("SET", "x", "1", "PX", "1")
    time.sleep(0.05)
    assert conn.cmd("WATCH", "x") == OK
    o.cmd("SET", "x", "new")
    assert tx(conn, ("PING",)) is None


def test_watch_and_flushdb(conn, o):
    conn.cmd("SET", "x", "1")
    assert conn.cmd("WATCH", "x") == OK
    o.cmd("FLUSHDB")
    assert tx(conn, ("PING",)) is None
    # A watched key that did not exist is not changed by FLUSHDB.
    o.cmd("SET", "y", "1")
    assert conn.cmd("WATCH", "x") == OK
    o.cmd("FLUSHDB")
    assert tx(conn, ("PING",)) == [PONG]
    # Nor is a key of another db.
    conn.cmd("SET", "x", "1")
    assert conn.cmd("WATCH", "x") == OK
    o.cmd("SELECT", "1")
    o.cmd("SET", "x", "1")
    o.cmd("FLUSHDB")
    assert tx(conn, ("PING",)) == [PONG]


def test_watch_and_flushall(conn, o):
    conn.cmd("SET", "x", "1")
    assert conn.cmd("WATCH", "x") == OK
    o.cmd("FLUSHALL")
    assert tx(conn, ("PING",)) is None
    assert conn.cmd("WATCH", "x") == OK
    o.cmd("SET", "y", "1")
    o.cmd("FLUSHALL")
    assert tx(conn, ("PING",)) == [PONG]
    # A key watched in db 1 is flushed too.
    conn.cmd("SELECT", "1")
    conn.cmd("SET", "x", "1")
    assert conn.cmd("WATCH", "x") == OK
    conn.cmd("SELECT", "0")
    o.cmd("FLUSHALL")
    assert tx(conn, ("PING",)) is None


def test_watch_and_swapdb(conn, o):
    # The watched key existed: SWAPDB replaces it.
    conn.cmd("SET", "x", "1")
    assert conn.cmd("WATCH", "x") == OK
    o.cmd("SWAPDB", "0", "1")
    assert tx(conn, ("PING",)) is None
    conn.cmd("FLUSHALL")
    # Missing, and present in the db swapped in.
    o.cmd("SELECT", "1")
    o.cmd("SET", "x", "1")
    assert conn.cmd("WATCH", "x") == OK
    o.cmd("SWAPDB", "0", "1")
    assert tx(conn, ("PING",)) is None
    conn.cmd("FLUSHALL")
    # Missing in both: no change.
    assert conn.cmd("WATCH", "x") == OK
    o.cmd("SWAPDB", "0", "1")
    assert tx(conn, ("PING",)) == [PONG]
    # Other dbs swapped: no change.
    conn.cmd("SET", "x", "1")
    assert conn.cmd("WATCH", "x") == OK
    o.cmd("SWAPDB", "2", "3")
    assert tx(conn, ("PING",)) == [PONG]


def test_watch_and_rename(conn, o):
    conn.cmd("SET", "src", "1")
    assert conn.cmd("WATCH", "src") == OK
    assert o.cmd("RENAME", "src", "dst") == OK
    assert tx(conn, ("PING",)) is None
    conn.cmd("FLUSHALL")
    conn.cmd("SET", "src", "1")
    assert conn.cmd("WATCH", "dst") == OK
    assert o.cmd("RENAME", "src", "dst") == OK
    assert tx(conn, ("PING",)) is None
    conn.cmd("FLUSHALL")
    conn.cmd("SET", "src", "1")
    assert conn.cmd("WATCH", "dst") == OK
    assert o.cmd("RENAMENX", "src", "dst") == 1
    assert tx(conn, ("PING",)) is None
    # A rename between two other keys changes nothing watched.
    assert conn.cmd("WATCH", "src") == OK
    assert o.cmd("RENAME", "dst", "third") == OK
    assert tx(conn, ("PING",)) == [PONG]


def test_watch_and_move(conn, o):
    conn.cmd("SET", "k", "1")
    assert conn.cmd("WATCH", "k") == OK
    assert o.cmd("MOVE", "k", "1") == 1
    assert tx(conn, ("PING",)) is None
    # The key moved into a db where it is watched.
    conn.cmd("FLUSHALL")
    conn.cmd("SET", "k", "1")
    conn.cmd("SELECT", "1")
    assert conn.cmd("WATCH", "k") == OK
    conn.cmd("SELECT", "0")
    assert o.cmd("MOVE", "k", "1") == 1
    assert tx(conn, ("PING",)) is None
    # A MOVE that fails (the key exists in the target) changes nothing.
    conn.cmd("FLUSHALL")
    conn.cmd("SET", "k", "1")
    o.cmd("SELECT", "1")
    o.cmd("SET", "k", "there")
    o.cmd("SELECT", "0")
    assert conn.cmd("WATCH", "k") == OK
    assert o.cmd("MOVE", "k", "1") == 0
    assert tx(conn, ("PING",)) == [PONG]


WRITES = [
    ([("SET", "w", "old")], ("SET", "w", "v")),
    ([("SET", "w", "old")], ("SET", "w", "old")),      # same value: still a write
    ([("SET", "w", "old")], ("APPEND", "w", "x")),
    ([("SET", "w", "1")], ("INCR", "w")),
    ([("SET", "w", "1")], ("INCRBYFLOAT", "w", "1.5")),
    ([("SET", "w", "abc")], ("SETRANGE", "w", "0", "z")),
    ([("SET", "w", "abc")], ("GETDEL", "w")),
    ([("SET", "w", "abc")], ("GETEX", "w", "EX", "100")),
    ([("SET", "w", "abc")], ("GETSET", "w", "n")),
    ([("SET", "w", "abc")], ("UNLINK", "w")),
    ([], ("MSET", "a", "1", "w", "2")),
    ([], ("MSETNX", "a", "1", "w", "2")),
    ([], ("SETNX", "w", "1")),
    ([], ("SETBIT", "w", "7", "1")),
    ([("SET", "src", "a")], ("BITOP", "OR", "w", "src")),
    ([], ("BITFIELD", "w", "SET", "u8", "0", "255")),
    ([], ("PFADD", "w", "x")),
    ([], ("LPUSH", "w", "x")),
    ([("RPUSH", "w", "a", "b")], ("RPOP", "w")),
    ([("RPUSH", "w", "a", "b")], ("LSET", "w", "0", "z")),
    ([("RPUSH", "w", "a", "b")], ("LTRIM", "w", "0", "0")),
    ([("RPUSH", "src", "a")], ("LMOVE", "src", "w", "LEFT", "LEFT")),
    ([("RPUSH", "w", "a")], ("LMOVE", "w", "dst", "LEFT", "LEFT")),
    ([("RPUSH", "w", "a")], ("BLPOP", "w", "0")),
    ([("HSET", "w", "f", "v")], ("HSET", "w", "f", "v2")),
    ([("HSET", "w", "f", "v")], ("HDEL", "w", "f")),
    ([("HSET", "w", "f", "1")], ("HINCRBY", "w", "f", "1")),
    ([("SADD", "w", "a")], ("SADD", "w", "b")),
    ([("SADD", "w", "a")], ("SREM", "w", "a")),
    ([("SADD", "src", "a")], ("SMOVE", "src", "w", "a")),
    ([("SADD", "w", "a")], ("SPOP", "w")),
    ([("SADD", "s1", "a")], ("SUNIONSTORE", "w", "s1")),
    ([("ZADD", "w", "1", "a")], ("ZADD", "w", "2", "b")),
    ([("ZADD", "w", "1", "a")], ("ZINCRBY", "w", "1", "a")),
    ([("ZADD", "w", "1", "a")], ("ZPOPMIN", "w")),
    ([("ZADD", "w", "1", "a")], ("ZREM", "w", "a")),
    ([], ("GEOADD", "w", "0", "0", "m")),
    ([("LPUSH", "w", "x")], ("SORT", "nolist", "STORE", "w")),   # even an empty result
    ([("SET", "src", "x")], ("COPY", "src", "w")),
    ([("SET", "w", "v", "EX", "100")], ("PERSIST", "w")),
    ([("SET", "w", "v")], ("EXPIRE", "w", "100")),
    ([("SET", "w", "v")], ("PEXPIREAT", "w", "99999999999999")),
]

NON_WRITES = [
    ([], ("DEL", "w")),
    ([("SET", "w", "v")], ("SET", "w", "x", "NX")),
    ([("SET", "w", "v")], ("PERSIST", "w")),
    ([], ("EXPIRE", "w", "100")),
    ([("SET", "w", "v", "EX", "100")], ("EXPIRE", "w", "200", "NX")),
    ([], ("LPUSHX", "w", "a")),
    ([("SADD", "w", "a")], ("SREM", "w", "b")),
    ([("SADD", "w", "a")], ("SADD", "w", "a")),
    ([("HSET", "w", "f", "v")], ("HDEL", "w", "g")),
    ([("ZADD", "w", "1", "a")], ("ZREM", "w", "b")),
    ([("SET", "src", "x"), ("SET", "w", "y")], ("RENAMENX", "src", "w")),
    ([("SET", "w", "x")], ("COPY", "w", "dst")),
    ([("SET", "w", "x")], ("GETEX", "w")),
    ([("SET", "w", "x")], ("GET", "w")),
    ([("SET", "w", "x")], ("STRLEN", "w")),
    ([("SET", "w", "x")], ("TTL", "w")),
    ([("SET", "w", "x")], ("TYPE", "w")),
    ([("SET", "w", "x")], ("EXISTS", "w")),
    ([], ("SETRANGE", "w", "0", "")),
    ([], ("GETDEL", "w")),
]


def _ids(cases):
    return ["%s-%d" % (w[0], i) for i, (_, w) in enumerate(cases)]


@pytest.mark.parametrize("setup,write", WRITES, ids=_ids(WRITES))
def test_watch_aborted_by_write(conn, o, setup, write):
    for args in setup:
        assert not isinstance(conn.cmd(*args), Error), args
    assert conn.cmd("WATCH", "w") == OK
    assert not isinstance(o.cmd(*write), Error), write
    assert tx(conn, ("PING",)) is None


@pytest.mark.parametrize("setup,cmd", NON_WRITES, ids=_ids(NON_WRITES))
def test_watch_not_aborted_by_command_that_changes_nothing(conn, o, setup, cmd):
    for args in setup:
        assert not isinstance(conn.cmd(*args), Error), args
    assert conn.cmd("WATCH", "w") == OK
    assert not isinstance(o.cmd(*cmd), Error), cmd
    assert tx(conn, ("PING",)) == [PONG]


def test_unwatch_clears_watches_and_dirty_state(conn, o):
    conn.cmd("SET", "x", "1")
    assert conn.cmd("WATCH", "x") == OK
    o.cmd("SET", "x", "2")
    assert conn.cmd_raw("UNWATCH") == b"+OK\r\n"
    assert tx(conn, ("GET", "x")) == [b"2"]
    assert conn.cmd("WATCH", "x") == OK
    assert conn.cmd("UNWATCH") == OK
    o.cmd("SET", "x", "3")
    assert tx(conn, ("GET", "x")) == [b"3"]


def test_exec_clears_watches(conn, o):
    conn.cmd("SET", "x", "1")
    assert conn.cmd("WATCH", "x") == OK
    assert tx(conn, ("PING",)) == [PONG]
    o.cmd("SET", "x", "2")
    assert tx(conn, ("PING",)) == [PONG]
    # After an aborted EXEC too.
    assert conn.cmd("WATCH", "x") == OK
    o.cmd("SET", "x", "3")
    assert tx(conn, ("PING",)) is None
    o.cmd("SET", "x", "4")
    assert tx(conn, ("PING",)) == [PONG]
    # And after an EXECABORT.
    assert conn.cmd("WATCH", "x") == OK
    assert conn.cmd("MULTI") == OK
    assert conn.cmd("NOSUCH") == unknown("NOSUCH")
    assert conn.cmd("EXEC") == EXECABORT
    o.cmd("SET", "x", "5")
    assert tx(conn, ("PING",)) == [PONG]


def test_discard_clears_watches_and_dirty_state(conn, o):
    assert conn.cmd("WATCH", "x") == OK
    o.cmd("SET", "x", "10")
    assert conn.cmd("MULTI") == OK
    assert conn.cmd("DISCARD") == OK
    assert tx(conn, ("INCR", "x")) == [11]
    assert conn.cmd("WATCH", "x") == OK
    assert conn.cmd("MULTI") == OK
    assert conn.cmd("DISCARD") == OK
    o.cmd("SET", "x", "20")
    assert tx(conn, ("INCR", "x")) == [21]


def test_execabort_wins_over_a_watch_abort(conn, o):
    conn.cmd("SET", "x", "1")
    assert conn.cmd("WATCH", "x") == OK
    o.cmd("SET", "x", "2")
    assert conn.cmd("MULTI") == OK
    assert conn.cmd("NOSUCH", "a") == unknown("NOSUCH", "a")
    assert conn.cmd("EXEC") == EXECABORT


def test_watch_several_keys_and_calls_accumulate(conn, o):
    keys = ["a", "b", "c", "{t}d", "e"]
    for k in keys:
        conn.cmd("SET", k, "0")
    for victim in keys:
        assert conn.cmd("WATCH", "a", "b") == OK
        assert conn.cmd("WATCH", "c") == OK
        assert conn.cmd("WATCH", "{t}d", "e", "a") == OK
        o.cmd("INCR", victim)
        assert tx(conn, ("PING",)) is None, victim
    assert conn.cmd("WATCH", "a", "b") == OK
    assert conn.cmd("WATCH", "c") == OK
    o.cmd("INCR", "unwatched")
    assert tx(conn, ("PING",)) == [PONG]


def test_rewatch_does_not_clear_a_dirty_watch(conn, o):
    conn.cmd("SET", "x", "1")
    assert conn.cmd("WATCH", "x") == OK
    o.cmd("SET", "x", "2")
    assert conn.cmd("WATCH", "x") == OK
    assert conn.cmd("WATCH", "y") == OK
    assert tx(conn, ("PING",)) is None


def test_watch_remembers_the_db_of_the_key(conn, o):
    conn.cmd("SELECT", "1")
    conn.cmd("SET", "k", "1")
    assert conn.cmd("WATCH", "k") == OK
    conn.cmd("SELECT", "0")
    # Same name in db 0: another key.
    o.cmd("SET", "k", "db0")
    assert tx(conn, ("PING",)) == [PONG]
    conn.cmd("SELECT", "1")
    assert conn.cmd("WATCH", "k") == OK
    conn.cmd("SELECT", "0")
    o.cmd("SELECT", "1")
    o.cmd("SET", "k", "2")
    assert tx(conn, ("GET", "k")) is None
    # The same name watched in two dbs: a change in either aborts.
    assert conn.cmd("WATCH", "k") == OK
    conn.cmd("SELECT", "1")
    assert conn.cmd("WATCH", "k") == OK
    o.cmd("SELECT", "0")
    o.cmd("SET", "k", "again")
    assert tx(conn, ("PING",)) is None


def test_watchers_are_independent(server, conn, o):
    c2 = server.conn()
    try:
        conn.cmd("SET", "x", "1")
        assert conn.cmd("WATCH", "x") == OK
        assert c2.cmd("WATCH", "x") == OK
        assert c2.cmd("WATCH", "y") == OK
        # The first watcher's own transaction writes x: the second is aborted.
        assert tx(conn, ("INCR", "x")) == [2]
        assert tx(c2, ("INCR", "x")) is None
        assert o.cmd("GET", "x") == b"2"
        # A watcher that disconnects leaves the others alone.
        assert conn.cmd("WATCH", "y") == OK
        c2.cmd("WATCH", "y")
        c2.close()
        assert tx(conn, ("SET", "y", "1")) == [OK]
    finally:
        c2.close()


# ---- RESP3 --------------------------------------------------------------------------


def test_exec_reply_types_resp3(conn3):
    raw = tx_raw(conn3, ("SET", "k", "v"), ("GET", "k"), ("GET", "missing"), ("HSET", "h", "f", "v"),
                 ("HGETALL", "h"), ("SADD", "s", "a"), ("SMEMBERS", "s"), ("ZADD", "z", "1.5", "m"),
                 ("ZSCORE", "z", "m"), ("ZRANGE", "z", "0", "-1", "WITHSCORES"), ("INCR", "n"),
                 ("INCRBYFLOAT", "f", "1.5"), ("EXISTS", "k"), ("LPOP", "nolist"), ("LPUSH", "k", "x"))
    assert raw == (b"*15\r\n+OK\r\n$1\r\nv\r\n_\r\n:1\r\n%1\r\n$1\r\nf\r\n$1\r\nv\r\n:1\r\n~1\r\n$1\r\na\r\n:1\r\n"
                   b",1.5\r\n*1\r\n*2\r\n$1\r\nm\r\n,1.5\r\n:1\r\n$3\r\n1.5\r\n:1\r\n_\r\n"
                   b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n")


def test_exec_reply_types_resp2(conn):
    conn.cmd("HSET", "h", "f", "v")
    conn.cmd("SADD", "s", "a")
    conn.cmd("ZADD", "z", "1.5", "m")
    raw = tx_raw(conn, ("HGETALL", "h"), ("SMEMBERS", "s"), ("ZSCORE", "z", "m"),
                 ("ZRANGE", "z", "0", "-1", "WITHSCORES"), ("GET", "missing"))
    assert raw == (b"*5\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n*1\r\n$1\r\na\r\n$3\r\n1.5\r\n"
                   b"*2\r\n$1\r\nm\r\n$3\r\n1.5\r\n$-1\r\n")


def test_errors_resp3(conn3):
    assert conn3.cmd_raw("EXEC") == b"-ERR EXEC without MULTI\r\n"
    assert conn3.cmd_raw("DISCARD") == b"-ERR DISCARD without MULTI\r\n"
    assert conn3.cmd_raw("MULTI") == b"+OK\r\n"
    assert conn3.cmd_raw("MULTI") == b"-ERR MULTI calls can not be nested\r\n"
    assert conn3.cmd_raw("WATCH", "x") == b"-ERR WATCH inside MULTI is not allowed\r\n"
    assert conn3.cmd_raw("NOSUCH") == b"-ERR unknown command 'NOSUCH', with args beginning with: \r\n"
    assert conn3.cmd_raw("EXEC") == b"-EXECABORT Transaction discarded because of previous errors.\r\n"


# ---- CLIENT LIST and INFO -------------------------------------------------------------


def test_client_list_multi_field_and_flag(conn, o):
    cid = o.cmd("CLIENT", "ID")
    row = client_row(conn, cid)
    assert (row["multi"], row["flags"]) == ("-1", "N")
    assert o.cmd("MULTI") == OK
    row = client_row(conn, cid)
    assert (row["multi"], row["flags"]) == ("0", "x")
    o.cmd("SET", "a", "1")
    o.cmd("GET", "a")
    assert client_row(conn, cid)["multi"] == "2"
    # Not queued: nested MULTI, WATCH.
    o.cmd("MULTI")
    o.cmd("WATCH", "k")
    assert client_row(conn, cid)["multi"] == "2"
    assert o.cmd("EXEC") == [OK, b"1"]
    row = client_row(conn, cid)
    assert (row["multi"], row["flags"]) == ("-1", "N")
    # After a queue-time error, nothing more is kept (EXEC will abort).
    o.cmd("MULTI")
    o.cmd("SET", "a", "1")
    o.cmd("NOSUCH")
    assert o.cmd("SET", "b", "1") == QUEUED
    assert client_row(conn, cid)["multi"] == "1"
    assert o.cmd("EXEC") == EXECABORT
    o.cmd("MULTI")
    o.cmd("SET", "a", "1")
    o.cmd("DISCARD")
    assert (client_row(conn, cid)["multi"], client_row(conn, cid)["flags"]) == ("-1", "N")


def test_client_list_flag_d_when_a_watched_key_changed(server, conn, o):
    c = server.conn()
    try:
        cid = c.cmd("CLIENT", "ID")
        conn.cmd("SET", "x", "1")
        assert c.cmd("WATCH", "x") == OK
        assert client_row(conn, cid)["flags"] == "N"
        o.cmd("SET", "x", "2")
        assert client_row(conn, cid)["flags"] == "d"
        assert c.cmd("MULTI") == OK
        assert client_row(conn, cid)["flags"] == "xd"
        # A doomed transaction keeps nothing it is sent.
        assert c.cmd("SET", "q", "1") == QUEUED
        assert client_row(conn, cid)["multi"] == "0"
        assert c.cmd("EXEC") is None
        assert client_row(conn, cid)["flags"] == "N"
        assert c.cmd("WATCH", "x") == OK
        o.cmd("SET", "x", "3")
        assert c.cmd("UNWATCH") == OK
        assert client_row(conn, cid)["flags"] == "N"
    finally:
        c.close()


def watch_counts(r):
    i = r.info("clients")
    return i["watching_clients"], i["total_watched_keys"]


@redis8("INFO watching_clients / total_watched_keys and CLIENT LIST watch= came with Redis 7.4")
def test_info_and_client_list_count_watches(server, r, o):
    # Connections of earlier tests may take a moment to go.
    assert wait_for(lambda: watch_counts(r) == (0, 0)), watch_counts(r)
    c1, c2 = server.conn(), server.conn()
    try:
        id1, id2 = c1.cmd("CLIENT", "ID"), c2.cmd("CLIENT", "ID")
        assert client_row(o, id1)["watch"] == "0"
        assert c1.cmd("WATCH", "a", "b") == OK
        assert watch_counts(r) == (1, 2)
        assert client_row(o, id1)["watch"] == "2"
        # Keys are counted once however many clients watch them.
        assert c2.cmd("WATCH", "b", "c") == OK
        assert watch_counts(r) == (2, 3)
        assert client_row(o, id2)["watch"] == "2"
        # Watching a key twice is one watch; the same name in another db is another key.
        assert c1.cmd("WATCH", "a") == OK
        assert client_row(o, id1)["watch"] == "2"
        c1.cmd("SELECT", "1")
        assert c1.cmd("WATCH", "a") == OK
        assert client_row(o, id1)["watch"] == "3"
        assert watch_counts(r) == (2, 4)
        # Inside MULTI the watches stay.
        assert c1.cmd("MULTI") == OK
        assert c1.cmd("PING") == QUEUED
        assert client_row(o, id1)["watch"] == "3"
        assert c1.cmd("DISCARD") == OK
        assert client_row(o, id1)["watch"] == "0"
        assert watch_counts(r) == (1, 2)
        assert c2.cmd("UNWATCH") == OK
        assert watch_counts(r) == (0, 0)
        assert client_row(o, id2)["watch"] == "0"
        # EXEC forgets them, and so does a disconnect.
        assert c1.cmd("WATCH", "x", "y") == OK
        assert tx(c1, ("PING",)) == [PONG]
        assert watch_counts(r) == (0, 0)
        assert c2.cmd("WATCH", "x", "y", "z") == OK
        assert watch_counts(r) == (1, 3)
        c2.close()
        assert wait_for(lambda: watch_counts(r) == (0, 0)), watch_counts(r)
    finally:
        c1.close()
        c2.close()


@redis8("Redis 7.4+ reports the watch counts that show a doomed client dropping its watches")
def test_client_whose_watched_key_changed_drops_its_watches(server, r, o):
    assert wait_for(lambda: watch_counts(r) == (0, 0)), watch_counts(r)
    c = server.conn()
    try:
        cid = c.cmd("CLIENT", "ID")
        assert c.cmd("WATCH", "a", "b", "c") == OK
        assert watch_counts(r) == (1, 3)
        o.cmd("SET", "b", "1")
        # The EXEC will fail whatever happens next: the watches are dropped.
        # The client stops counting at once; its keys leave the watch
        # tables when its own worker drops them (HotKV: a mail away).
        assert client_row(o, cid)["watch"] == "0"
        assert watch_counts(r)[0] == 0
        assert wait_for(lambda: watch_counts(r) == (0, 0)), watch_counts(r)
        # And WATCH adds none while it is doomed.
        assert c.cmd("WATCH", "d") == OK
        assert client_row(o, cid)["watch"] == "0"
        assert watch_counts(r) == (0, 0)
        assert tx(c, ("PING",)) is None
        assert c.cmd("WATCH", "d") == OK
        assert client_row(o, cid)["watch"] == "1"
        assert watch_counts(r) == (1, 1)
    finally:
        c.close()


# ---- same bytes as a real Redis ---------------------------------------------------------

SCRIPT = [
    ("a", "MULTI"), ("a", "SET", "k", "v"), ("a", "GET", "k"), ("a", "LPUSH", "k", "x"), ("a", "INCR", "n"),
    ("a", "EXEC"),
    ("a", "MULTI"), ("a", "EXEC"),
    ("a", "MULTI"), ("a", "MULTI"), ("a", "WATCH", "k"), ("a", "INCR", "n"), ("a", "EXEC"),
    ("a", "MULTI"), ("a", "SET", "q", "1"), ("a", "NOPE", "1", "2"), ("a", "GET"), ("a", "EXEC"), ("a", "EXEC"),
    ("a", "DISCARD"), ("a", "MULTI"), ("a", "DEL", "k"), ("a", "DISCARD"), ("a", "GET", "k"),
    ("a", "EXEC", "x"), ("a", "MULTI"), ("a", "EXEC", "x"),
    ("a", "WATCH", "k"), ("b", "SET", "k", "v2"), ("a", "MULTI"), ("a", "GET", "k"), ("a", "EXEC"),
    ("a", "WATCH", "k"), ("b", "GET", "k"), ("a", "MULTI"), ("a", "GET", "k"), ("a", "EXEC"),
    ("a", "WATCH", "k", "m"), ("b", "SET", "m", "1"), ("a", "UNWATCH"), ("a", "MULTI"), ("a", "GET", "m"),
    ("a", "EXEC"),
    ("a", "MULTI"), ("a", "SELECT", "3"), ("a", "SET", "k", "db3"), ("a", "EXEC"), ("a", "GET", "k"),
    ("a", "SELECT", "0"),
    ("a", "MULTI"), ("a", "BLPOP", "empty", "0"), ("a", "BRPOPLPUSH", "empty", "e2", "0"), ("a", "EXEC"),
    ("a", "HELLO", "3"),
    ("a", "MULTI"), ("a", "HSET", "h", "f", "1"), ("a", "HGETALL", "h"), ("a", "GET", "none"),
    ("a", "ZADD", "z", "2.5", "m"), ("a", "ZSCORE", "z", "m"), ("a", "SMEMBERS", "h"), ("a", "EXEC"),
    ("a", "WATCH", "h"), ("b", "HSET", "h", "f", "2"), ("a", "MULTI"), ("a", "PING"), ("a", "EXEC"),
    ("a", "MULTI"), ("a", "BLPOP", "empty", "0"), ("a", "EXEC"),
]


def run_script(port):
    conns = {"a": RespConn("127.0.0.1", port), "b": RespConn("127.0.0.1", port)}
    try:
        conns["a"].cmd("FLUSHALL")
        out = []
        for who, *args in SCRIPT:
            if args[0] == "HELLO":   # its reply names the server and its version
                conns[who].cmd(*args)
                out.append(None)
            else:
                out.append(conns[who].cmd_raw(*args))
        return out
    finally:
        for c in conns.values():
            c.close()


def test_same_bytes_as_real_redis(server, r, redis_ref):
    if redis_ref is None:
        pytest.skip("redis-server not installed")
    ours, theirs = run_script(server.port), run_script(redis_ref)
    for step, mine, ref in zip(SCRIPT, ours, theirs):
        assert mine == ref, step


# ---- atomicity under concurrency -----------------------------------------------------------


def test_concurrent_transfers_keep_the_total(mt_server):
    """Writers move amounts between accounts under WATCH (check the balance,
    then write absolute values or DECRBY/INCRBY); readers sum all accounts
    inside MULTI/EXEC and with MGET. The total never moves and no account
    goes negative: a lost update or a torn transaction would show."""
    accounts = keys_in_distinct_slots("acct:", 8)
    start = 1000
    total = start * len(accounts)
    r0 = mt_server.client()
    r0.mset({a: start for a in accounts})
    writers_done = threading.Event()
    committed, reads, bad = [0], [0], []
    lock = threading.Lock()

    def writer(i):
        c = mt_server.client()
        rnd = random.Random(i)
        n = 0
        try:
            for _ in range(150):
                a, b = rnd.sample(accounts, 2)
                amount = rnd.randint(1, 60)
                with c.pipeline() as p:
                    try:
                        p.watch(a, b)
                        va, vb = int(p.get(a)), int(p.get(b))
                        if va < amount:
                            continue
                        p.multi()
                        if i % 2:
                            p.set(a, va - amount)
                            p.set(b, vb + amount)
                            assert p.execute() == [True, True]
                        else:
                            p.decrby(a, amount)
                            p.incrby(b, amount)
                            # Nobody changed a or b since the GETs.
                            assert p.execute() == [va - amount, vb + amount]
                        n += 1
                    except redis.WatchError:
                        pass
        finally:
            c.close()
            with lock:
                committed[0] += n

    def reader(i):
        c = mt_server.client()
        try:
            while not writers_done.is_set() or reads[0] < 20:
                p = c.pipeline(transaction=True)
                for a in accounts:
                    p.get(a)
                vals = [int(v) for v in p.execute()]
                vals2 = [int(v) for v in c.mget(accounts)]
                for vs in (vals, vals2):
                    if sum(vs) != total or min(vs) < 0:
                        bad.append(vs)
                with lock:
                    reads[0] += 1
        finally:
            c.close()

    readers = [threading.Thread(target=reader, args=(i,)) for i in range(2)]
    for t in readers:
        t.start()
    try:
        run_threads(8, writer)
    finally:
        writers_done.set()
        for t in readers:
            t.join(30)
    assert not any(t.is_alive() for t in readers)
    assert not bad, bad[:3]
    assert committed[0] > 100
    assert reads[0] >= 20
    final = [int(v) for v in r0.mget(accounts)]
    assert sum(final) == total and min(final) >= 0, final
    r0.close()


def test_concurrent_incr_transactions_are_exact(mt_server):
    """Each transaction increments three counters on different shards: every
    EXEC reply shows them in step, and the totals are exact."""
    keys = keys_in_distinct_slots("ctr:", 3)
    clients, per_client = 8, 200

    def worker(i):
        c = mt_server.client()
        try:
            for _ in range(per_client):
                p = c.pipeline(transaction=True)
                p.incr(keys[0])
                p.incr(keys[1])
                p.incrby(keys[2], 2)
                x, y, z = p.execute()
                assert x == y and z == 2 * x, (x, y, z)
        finally:
            c.close()

    t0 = time.time()
    run_threads(clients, worker)
    r0 = mt_server.client()
    assert [int(v) for v in r0.mget(keys)] == [clients * per_client, clients * per_client, 2 * clients * per_client]
    r0.close()
    assert time.time() - t0 < 30


def test_reader_never_sees_a_transaction_half_applied(mt_server):
    keys = keys_in_distinct_slots("pair:", 4)
    r0 = mt_server.client()
    r0.mset({k: "init" for k in keys})
    writers_done = threading.Event()
    torn, reads = [], [0]

    def writer(i):
        c = mt_server.client()
        try:
            for n in range(300):
                v = "%d-%d" % (i, n)
                p = c.pipeline(transaction=True)
                for k in keys:
                    p.set(k, v)
                assert p.execute() == [True] * len(keys)
        finally:
            c.close()

    def reader(i):
        c = mt_server.client()
        try:
            while not writers_done.is_set() or reads[0] < 50:
                p = c.pipeline(transaction=True)
                for k in keys:
                    p.get(k)
                vals = p.execute()
                reads[0] += 1
                if len(set(vals)) != 1:
                    torn.append(vals)
        finally:
            c.close()

    readers = [threading.Thread(target=reader, args=(i,)) for i in range(4)]
    for t in readers:
        t.start()
    try:
        run_threads(4, writer)
    finally:
        writers_done.set()
        for t in readers:
            t.join(30)
    assert not any(t.is_alive() for t in readers)
    assert not torn, torn[:3]
    assert reads[0] >= 50
    assert len(set(r0.mget(keys))) == 1
    r0.close()


def test_watch_check_and_set_counter_is_exact(mt_server):
    """The classic optimistic increment: WATCH, GET, MULTI, SET v+1, EXEC,
    retried on abort. No increment is lost."""
    clients, per_client = 6, 30
    r0 = mt_server.client()
    r0.set("cas", 0)
    attempts = [0]

    def worker(i):
        c = mt_server.client()
        try:
            done = tries = 0
            while done < per_client:
                tries += 1
                assert tries < 5000, "too many aborts"
                with c.pipeline() as p:
                    try:
                        p.watch("cas")
                        v = int(p.get("cas"))
                        p.multi()
                        p.set("cas", v + 1)
                        p.execute()
                        done += 1
                    except redis.WatchError:
                        pass
            attempts[0] += tries
        finally:
            c.close()

    run_threads(clients, worker)
    assert int(r0.get("cas")) == clients * per_client
    r0.close()
