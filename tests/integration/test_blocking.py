"""Blocking commands: BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN,
BZPOPMAX, BZMPOP and CLIENT UNBLOCK, across connections and worker threads.

A blocked connection is driven with RespConn: the command is sent, the
test waits until INFO reports the client blocked (poll.wait_until on the
exact count), then acts from another connection and reads the reply.
"""
import threading
import time

import pytest

from poll import wait_until
from resp import Error, encode


def clients_field(r, field):
    return int(r.info("clients")[field])


def blocked(r):
    return clients_field(r, "blocked_clients")


def blocking_keys(r):
    return clients_field(r, "total_blocking_keys")


def wait_blocked(r, n):
    wait_until(lambda: blocked(r), lambda v: v == n, what="blocked_clients == %d" % n)


def block(server, r, *cmd, already=0):
    """Open a connection, send cmd, wait until it is blocked."""
    c = server.conn()
    c.send(encode(*cmd))
    wait_blocked(r, already + 1)
    return c


def cmdstat_calls(r, name):
    stats = r.info("commandstats").get("cmdstat_%s" % name)
    return int(stats["calls"]) if stats else 0


# ---- lists ------------------------------------------------------------------


def test_blpop_served_at_once_when_data_exists(r, conn):
    r.rpush("l", "a", "b", "c")
    assert conn.cmd("BLPOP", "missing", "l", "0") == [b"l", b"a"]
    assert conn.cmd("BRPOP", "l", "0") == [b"l", b"c"]
    assert conn.cmd("BLPOP", "l", "1") == [b"l", b"b"]
    assert r.exists("l") == 0
    assert blocked(r) == 0


def test_blpop_woken_by_lpush_from_another_connection(server, r):
    c = block(server, r, "BLPOP", "k", "0")
    assert blocking_keys(r) == 1
    assert r.lpush("k", "v") == 1
    assert c.read() == [b"k", b"v"]
    wait_blocked(r, 0)
    assert blocking_keys(r) == 0
    assert r.exists("k") == 0
    # The connection goes on normally after being served.
    assert c.cmd("PING") == "PONG"
    c.close()


def test_brpop_woken_takes_the_tail(server, r):
    c = block(server, r, "BRPOP", "k", "0")
    r.rpush("k", "a", "b", "c")
    assert c.read() == [b"k", b"c"]
    assert r.lrange("k", 0, -1) == [b"a", b"b"]
    c.close()


def test_timeout_replies_null_array(server, r, conn):
    t0 = time.monotonic()
    assert conn.cmd_raw("BLPOP", "k", "0.1") == b"*-1\r\n"
    dt = time.monotonic() - t0
    assert 0.09 <= dt < 3
    assert conn.cmd_raw("BRPOP", "k1", "k2", "0.05") == b"*-1\r\n"
    assert conn.cmd_raw("BLMOVE", "a", "b", "LEFT", "RIGHT", "0.05") == b"*-1\r\n"
    assert conn.cmd_raw("BRPOPLPUSH", "a", "b", "0.05") == b"*-1\r\n"
    assert conn.cmd_raw("BLMPOP", "0.05", "1", "a", "LEFT") == b"*-1\r\n"
    assert conn.cmd_raw("BZPOPMIN", "z", "0.05") == b"*-1\r\n"
    assert conn.cmd_raw("BZMPOP", "0.05", "1", "z", "MIN") == b"*-1\r\n"
    assert blocked(r) == 0


def test_timeout_resp3_null(conn3):
    assert conn3.cmd_raw("BLPOP", "k", "0.05") == b"_\r\n"
    assert conn3.cmd_raw("BZPOPMAX", "k", "0.05") == b"_\r\n"


def test_fractional_timeout_then_pipelined_command_runs(server, r):
    c = server.conn()
    t0 = time.monotonic()
    c.send(encode("BLPOP", "k", "0.25") + encode("PING"))
    assert c.read() is None
    assert time.monotonic() - t0 >= 0.24
    assert c.read() == "PONG"
    c.close()


def test_timeout_errors(conn, r):
    assert conn.cmd("BLPOP", "k", "-1") == Error("ERR timeout is negative")
    assert conn.cmd("BLPOP", "k", "abc") == Error("ERR timeout is not a float or out of range")
    assert conn.cmd("BLPOP", "k", "nan") == Error("ERR timeout is not a float or out of range")
    # An infinite timeout is a float (Redis 8): too far, or negative.
    assert conn.cmd("BLPOP", "k", "inf") == Error("ERR timeout is out of range")
    assert conn.cmd("BLPOP", "k", "-inf") == Error("ERR timeout is negative")
    assert conn.cmd("BZPOPMIN", "k", "-0.5") == Error("ERR timeout is negative")
    assert conn.cmd("BLMPOP", "x", "1", "k", "LEFT") == Error("ERR timeout is not a float or out of range")
    assert conn.cmd("BLPOP", "k") == Error("ERR wrong number of arguments for 'blpop' command")


def test_wrongtype_on_first_run(conn, r):
    r.set("s", "x")
    assert conn.cmd("BLPOP", "s", "0") == Error("WRONGTYPE Operation against a key holding the wrong kind of value")
    assert conn.cmd("BLPOP", "empty", "s", "0") == Error(
        "WRONGTYPE Operation against a key holding the wrong kind of value")
    assert conn.cmd("BZPOPMIN", "s", "0") == Error(
        "WRONGTYPE Operation against a key holding the wrong kind of value")
    r.rpush("l", "a")
    assert conn.cmd("BLMOVE", "l", "s", "LEFT", "LEFT", "0") == Error(
        "WRONGTYPE Operation against a key holding the wrong kind of value")
    assert r.lrange("l", 0, -1) == [b"a"]


def test_blocked_client_skips_value_of_other_type(server, r):
    c = block(server, r, "BLPOP", "k", "0")
    r.set("k", "string")
    time.sleep(0.05)
    assert blocked(r) == 1
    r.delete("k")
    r.rpush("k", "v")
    assert c.read() == [b"k", b"v"]
    c.close()


def test_fifo_order_of_waiters(server, r):
    conns = []
    for i in range(4):
        conns.append(block(server, r, "BLPOP", "q", "0", already=i))
    r.rpush("q", "a", "b", "c", "d")
    assert [c.read() for c in conns] == [[b"q", b"a"], [b"q", b"b"], [b"q", b"c"], [b"q", b"d"]]
    wait_blocked(r, 0)
    for c in conns:
        c.close()


def test_fifo_one_item_at_a_time(server, r):
    conns = [block(server, r, "BRPOP", "q", "0", already=i) for i in range(3)]
    for i, c in enumerate(conns):
        r.lpush("q", "v%d" % i)
        assert c.read() == [b"q", b"v%d" % i]
    for c in conns:
        c.close()


def test_multiple_keys(server, r):
    c = block(server, r, "BLPOP", "k1", "k2", "k3", "0")
    assert blocking_keys(r) == 3
    r.rpush("k2", "x")
    assert c.read() == [b"k2", b"x"]
    wait_blocked(r, 0)
    assert blocking_keys(r) == 0
    c.close()


def test_same_key_twice(server, r):
    c = block(server, r, "BLPOP", "k", "k", "0")
    assert blocking_keys(r) == 1
    r.rpush("k", "x", "y")
    assert c.read() == [b"k", b"x"]
    assert r.lrange("k", 0, -1) == [b"y"]
    c.close()


def test_other_database(server, r):
    c = server.conn()
    assert c.cmd("SELECT", "1") == "OK"
    c.send(encode("BLPOP", "k", "0"))
    wait_blocked(r, 1)
    r.rpush("k", "db0")  # db 0: not the watched key
    time.sleep(0.05)
    assert blocked(r) == 1
    r.execute_command("SELECT", "1")
    r.rpush("k", "db1")
    assert c.read() == [b"k", b"db1"]
    r.execute_command("SELECT", "0")
    assert r.lrange("k", 0, -1) == [b"db0"]
    c.close()


def test_woken_by_rename_swapdb_move_and_copy(server, r):
    c = block(server, r, "BLPOP", "k", "0")
    r.rpush("tmp", "renamed")
    r.rename("tmp", "k")
    assert c.read() == [b"k", b"renamed"]
    c.send(encode("BLPOP", "k", "0"))
    wait_blocked(r, 1)
    r.execute_command("SELECT", "2")
    r.rpush("k", "swapped")
    r.execute_command("SELECT", "0")
    r.execute_command("SWAPDB", "0", "2")
    assert c.read() == [b"k", b"swapped"]
    r.execute_command("SWAPDB", "0", "2")
    c.send(encode("BLPOP", "k", "0"))
    wait_blocked(r, 1)
    r.execute_command("SELECT", "3")
    r.rpush("k", "moved")
    assert r.move("k", 0)
    r.execute_command("SELECT", "0")
    assert c.read() == [b"k", b"moved"]
    c.send(encode("BZPOPMIN", "k", "0"))
    wait_blocked(r, 1)
    r.zadd("zsrc", {"m": 4})
    assert r.copy("zsrc", "k")
    assert c.read() == [b"k", b"m", b"4"]
    assert r.zrange("zsrc", 0, -1) == [b"m"]
    c.close()


def test_blmove_and_brpoplpush(server, r):
    c = block(server, r, "BLMOVE", "src", "dst", "RIGHT", "LEFT", "0")
    r.rpush("src", "a", "b")
    assert c.read() == b"b"
    assert r.lrange("src", 0, -1) == [b"a"]
    assert r.lrange("dst", 0, -1) == [b"b"]
    r.delete("src", "dst")
    c.send(encode("BRPOPLPUSH", "src", "dst", "0"))
    wait_blocked(r, 1)
    r.rpush("src", "x", "y")
    assert c.read() == b"y"
    assert r.lrange("dst", 0, -1) == [b"y"]
    # Immediate forms, including a rotation of the same list.
    r.rpush("rot", "1", "2", "3")
    assert c.cmd("BLMOVE", "rot", "rot", "LEFT", "RIGHT", "0") == b"1"
    assert r.lrange("rot", 0, -1) == [b"2", b"3", b"1"]
    assert c.cmd("BLMOVE", "rot", "d", "UP", "LEFT", "0") == Error("ERR syntax error")
    c.close()


def test_blmove_woken_with_wrongtype_destination_errors(server, r):
    r.set("dst", "str")
    c = block(server, r, "BLMOVE", "src", "dst", "LEFT", "LEFT", "0")
    r.rpush("src", "a")
    assert c.read() == Error("WRONGTYPE Operation against a key holding the wrong kind of value")
    assert r.lrange("src", 0, -1) == [b"a"]
    wait_blocked(r, 0)
    c.close()


def test_blmpop(server, r, conn):
    r.rpush("b", "1", "2", "3")
    assert conn.cmd("BLMPOP", "0", "2", "a", "b", "RIGHT", "COUNT", "2") == [b"b", [b"3", b"2"]]
    assert conn.cmd("BLMPOP", "0", "2", "a", "b", "LEFT") == [b"b", [b"1"]]
    c = block(server, r, "BLMPOP", "0", "2", "a", "b", "LEFT", "COUNT", "10")
    r.rpush("b", "x", "y")
    assert c.read() == [b"b", [b"x", b"y"]]
    assert r.exists("b") == 0
    assert conn.cmd("BLMPOP", "0", "0", "a", "LEFT") == Error("ERR numkeys should be greater than 0")
    assert conn.cmd("BLMPOP", "0", "1", "a", "UP") == Error("ERR syntax error")
    assert conn.cmd("BLMPOP", "0", "3", "a", "LEFT") == Error("ERR syntax error")
    assert conn.cmd("BLMPOP", "0", "1", "a", "LEFT", "COUNT", "0") == Error("ERR count should be greater than 0")
    assert conn.cmd("BLMPOP", "0", "1", "a", "LEFT", "COUNT") == Error("ERR syntax error")
    c.close()


# ---- sorted sets ------------------------------------------------------------


def test_bzpopmin_bzpopmax_immediate(conn, r, conn3):
    r.zadd("z", {"a": 1, "b": 2.5, "c": 3})
    assert conn.cmd("BZPOPMIN", "none", "z", "0") == [b"z", b"a", b"1"]
    assert conn.cmd("BZPOPMAX", "z", "0") == [b"z", b"c", b"3"]
    assert conn3.cmd_raw("BZPOPMIN", "z", "0") == b"*3\r\n$1\r\nz\r\n$1\r\nb\r\n,2.5\r\n"
    assert r.exists("z") == 0


def test_bzpopmin_woken_by_zadd(server, r):
    c = block(server, r, "BZPOPMIN", "z1", "z2", "0")
    r.zadd("z2", {"m": 5, "n": 7})
    assert c.read() == [b"z2", b"m", b"5"]
    c.send(encode("BZPOPMAX", "z2", "0"))
    assert c.read() == [b"z2", b"n", b"7"]
    c.send(encode("BZPOPMAX", "z2", "0"))
    wait_blocked(r, 1)
    r.zincrby("z2", 2, "p")
    assert c.read() == [b"z2", b"p", b"2"]
    c.close()


def test_list_and_zset_waiters_on_one_key(server, r):
    lc = block(server, r, "BLPOP", "k", "0")
    zc = block(server, r, "BZPOPMIN", "k", "0", already=1)
    r.zadd("k", {"m": 1})
    assert zc.read() == [b"k", b"m", b"1"]
    wait_blocked(r, 1)
    r.rpush("k", "v")
    assert lc.read() == [b"k", b"v"]
    lc.close()
    zc.close()


def test_bzmpop(server, r, conn):
    r.zadd("z", {"a": 1, "b": 2, "c": 3})
    assert conn.cmd("BZMPOP", "0", "1", "z", "MAX", "COUNT", "2") == [b"z", [[b"c", b"3"], [b"b", b"2"]]]
    c = block(server, r, "BZMPOP", "0", "2", "y", "z2", "MIN", "COUNT", "5")
    r.zadd("z2", {"x": 1, "y": 2})
    assert c.read() == [b"z2", [[b"x", b"1"], [b"y", b"2"]]]
    assert conn.cmd("BZMPOP", "0", "1", "z", "SIDEWAYS") == Error("ERR syntax error")
    c.close()


# ---- CLIENT UNBLOCK, disconnects, INFO and stats -----------------------------


def test_client_unblock_timeout_and_error(server, r):
    c = server.conn()
    cid = c.cmd("CLIENT", "ID")
    c.send(encode("BLPOP", "k", "0"))
    wait_blocked(r, 1)
    assert r.execute_command("CLIENT", "UNBLOCK", cid) == 1
    assert c.read() is None
    wait_blocked(r, 0)
    assert r.execute_command("CLIENT", "UNBLOCK", cid) == 0
    c.send(encode("BLMOVE", "a", "b", "LEFT", "LEFT", "0"))
    wait_blocked(r, 1)
    assert r.execute_command("CLIENT", "UNBLOCK", cid, "ERROR") == 1
    assert c.read() == Error("UNBLOCKED client unblocked via CLIENT UNBLOCK")
    c.send(encode("BZPOPMIN", "z", "0"))
    wait_blocked(r, 1)
    assert r.execute_command("CLIENT", "UNBLOCK", cid, "timeout") == 1
    assert c.read() is None
    assert blocking_keys(r) == 0
    with pytest.raises(Exception, match="CLIENT UNBLOCK reason should be TIMEOUT or ERROR"):
        r.execute_command("CLIENT", "UNBLOCK", cid, "MAYBE")
    with pytest.raises(Exception, match="value is not an integer or out of range"):
        r.execute_command("CLIENT", "UNBLOCK", "abc")
    r.rpush("k", "kept")
    assert r.lrange("k", 0, -1) == [b"kept"]
    c.close()


def test_disconnect_while_blocked_leaves_nothing(server, r):
    conns = [block(server, r, "BLPOP", "k", "other", "0", already=i) for i in range(3)]
    assert blocking_keys(r) == 2
    for c in conns:
        c.close()
    wait_blocked(r, 0)
    assert blocking_keys(r) == 0
    r.rpush("k", "v")
    time.sleep(0.05)
    assert r.lrange("k", 0, -1) == [b"v"]


def test_killed_while_blocked_leaves_nothing(server, r):
    c = server.conn()
    cid = c.cmd("CLIENT", "ID")
    c.send(encode("BZPOPMAX", "z", "k", "0"))
    wait_blocked(r, 1)
    assert r.execute_command("CLIENT", "KILL", "ID", cid) == 1
    wait_blocked(r, 0)
    assert blocking_keys(r) == 0
    r.rpush("k", "v")
    r.zadd("z", {"m": 1})
    time.sleep(0.05)
    assert r.lrange("k", 0, -1) == [b"v"]
    assert r.zcard("z") == 1
    c.close()


def test_disconnected_head_passes_turn_on(server, r):
    first = block(server, r, "BLPOP", "k", "0")
    second = block(server, r, "BLPOP", "k", "0", already=1)
    first.close()
    wait_blocked(r, 1)
    r.rpush("k", "v")
    assert second.read() == [b"k", b"v"]
    second.close()


def test_client_list_flags_and_info(server, r):
    c = server.conn()
    cid = c.cmd("CLIENT", "ID")
    c.send(encode("BLPOP", "k", "0.0"))
    wait_blocked(r, 1)
    line = [ln for ln in r.execute_command("CLIENT", "LIST").decode().splitlines() if ln.startswith("id=%d " % cid)]
    assert "flags=b " in line[0]
    assert "cmd=blpop " in line[0]
    assert clients_field(r, "clients_in_timeout_table") == 0
    d = block(server, r, "BLPOP", "k2", "100", already=1)
    assert clients_field(r, "clients_in_timeout_table") == 1
    assert blocking_keys(r) == 2
    c.close()
    d.close()
    wait_blocked(r, 0)
    assert clients_field(r, "clients_in_timeout_table") == 0


def test_commandstats_count_blocked_call_once(server, r):
    r.execute_command("CONFIG", "RESETSTAT")
    c = block(server, r, "BLPOP", "k", "0")
    assert cmdstat_calls(r, "blpop") == 0
    r.rpush("k", "a")
    assert c.read() == [b"k", b"a"]
    wait_until(lambda: cmdstat_calls(r, "blpop"), lambda v: v == 1, what="blpop counted")
    assert c.cmd("BLPOP", "k", "0.01") is None
    wait_until(lambda: cmdstat_calls(r, "blpop"), lambda v: v == 2, what="timeout counted")
    c.close()


def test_waiters_on_both_worker_threads(server, r):
    n = 16
    conns = [block(server, r, "BLPOP", "mt", "0", already=i) for i in range(n)]
    r.rpush("mt", *["v%d" % i for i in range(n)])
    got = [c.read() for c in conns]
    assert got == [[b"mt", b"v%d" % i] for i in range(n)]
    for c in conns:
        c.close()


def test_pipelined_blocking_commands(server, r):
    c = server.conn()
    c.send(encode("BLPOP", "p", "0") * 3 + encode("PING"))
    wait_blocked(r, 1)
    r.rpush("p", "1", "2", "3")
    assert [c.read() for _ in range(4)] == [[b"p", b"1"], [b"p", b"2"], [b"p", b"3"], "PONG"]
    c.close()


# ---- concurrency --------------------------------------------------------------


def test_twenty_producers_twenty_consumers_lose_and_duplicate_nothing(server, r):
    producers = consumers = 20
    total = 200000
    per_p, per_c = total // producers, total // consumers
    batch = 500
    got = [None] * consumers
    errors = []

    def consume(i):
        try:
            c = server.conn(timeout=60)
            items = []
            left = per_c
            while left:
                n = min(batch, left)
                c.send(encode("BLPOP", "q", "0") * n)
                for _ in range(n):
                    reply = c.read()
                    items.append(reply[1])
                left -= n
            got[i] = items
            c.close()
        except Exception as e:  # reported below
            errors.append(e)

    def produce(i):
        try:
            c = server.conn(timeout=60)
            for start in range(0, per_p, batch):
                c.send(b"".join(encode("RPUSH", "q", "%d:%d" % (i, j)) for j in range(start, start + batch)))
                for _ in range(batch):
                    assert isinstance(c.read(), int)
            c.close()
        except Exception as e:
            errors.append(e)

    threads = [threading.Thread(target=consume, args=(i,)) for i in range(consumers)]
    for t in threads:
        t.start()
    # Every consumer waits on the empty list before the first push, so the
    # wake-up path (not only immediate pops) carries the items.
    wait_blocked(r, consumers)
    more = [threading.Thread(target=produce, args=(i,)) for i in range(producers)]
    for t in more:
        t.start()
    threads += more
    for t in threads:
        t.join(120)
    assert not errors, errors
    everything = [x for items in got for x in items]
    assert len(everything) == total
    assert len(set(everything)) == total
    assert set(everything) == {b"%d:%d" % (i, j) for i in range(producers) for j in range(per_p)}
    # Each producer's items come out in the order it pushed them.
    for items in got:
        last = {}
        for x in items:
            p, j = map(int, x.split(b":"))
            assert last.get(p, -1) < j
            last[p] = j
    assert r.exists("q") == 0
    wait_blocked(r, 0)
    assert blocking_keys(r) == 0


def test_many_keys(server, r):
    keys = ["mk%d" % i for i in range(100)]
    c = block(server, r, "BRPOP", *keys, "0")
    assert blocking_keys(r) == 100
    r.rpush("mk77", "x")
    assert c.read() == [b"mk77", b"x"]
    wait_blocked(r, 0)
    assert blocking_keys(r) == 0
    r.rpush("mk99", "y")
    assert c.cmd("BLPOP", *keys, "0") == [b"mk99", b"y"]
    c.close()


def test_command_info_flags(r, conn):
    blpop, bzmpop = conn.cmd("COMMAND", "INFO", "blpop", "bzmpop")
    assert blpop[:6] == [b"blpop", -3, ["write", "noscript", "blocking"], 1, -2, 1]
    assert bzmpop[:6] == [b"bzmpop", -5, ["write", "blocking", "movablekeys"], 0, 0, 0]
    assert conn.cmd("COMMAND", "GETKEYS", "BLMPOP", "0", "2", "a", "b", "LEFT") == [b"a", b"b"]
    assert conn.cmd("COMMAND", "GETKEYS", "BLPOP", "a", "b", "0") == [b"a", b"b"]
    assert conn.cmd("COMMAND", "GETKEYS", "BLMOVE", "s", "d", "LEFT", "LEFT", "0") == [b"s", b"d"]
