"""The execution core seen from outside: what writes propagate (through
DEBUG JOURNAL), that the journal replays into a fresh server to the same
dataset (DEBUG DIGEST) even when many clients write at once on several
threads, that the digest is Redis's own (a real redis-server fed the same
journal agrees), and the blocked-client counters.

Servers here are private (new_server) with enable-debug-command yes.
"""
import random
import shutil
import threading
import time

import pytest
import redis

from conftest import real_redis
from resp import Error, RespConn, encode, parse_commands

ZERO_DIGEST = b"0" * 40


def debug_server(new_server, threads=2, *extra):
    return new_server("--enable-debug-command", "yes", *extra, threads=threads)


def journal(r):
    return r.execute_command("DEBUG", "JOURNAL", "READ")


def journal_cmds(r, drop_select=True):
    cmds = parse_commands(journal(r))
    if drop_select:
        cmds = [c for c in cmds if c[0].upper() != b"SELECT"]
    return [[a.upper() if j == 0 else a for j, a in enumerate(c)] for c in cmds]


def replay(port, data, apply=True):
    """Send a journal to a server and wait for every reply. With `apply`
    the connection first says it applies a journal (HotKV only): time-based
    expiry then waits for the stream's own DELs, as on a replica."""
    n = len(parse_commands(data))
    c = RespConn("127.0.0.1", port, timeout=60)
    if apply:
        assert c.cmd("DEBUG", "JOURNAL", "APPLY", "ON") == "OK"
    errors = []
    chunk = 1 << 20
    for off in range(0, len(data), chunk):
        c.send(data[off:off + chunk])
    for _ in range(n):
        rep = c.read()
        if isinstance(rep, Error):
            errors.append(rep)
    c.close()
    return errors


# ---- digest --------------------------------------------------------------


def test_digest_basics(new_server):
    srv = debug_server(new_server)
    r = srv.client()
    assert r.execute_command("DEBUG", "DIGEST") == ZERO_DIGEST
    assert r.execute_command("DEBUG", "DIGEST-VALUE") == []
    assert r.execute_command("DEBUG", "DIGEST-VALUE", "nokey") == [ZERO_DIGEST]
    r.rpush("l", "a", "b")
    d1 = r.execute_command("DEBUG", "DIGEST")
    assert d1 != ZERO_DIGEST and len(d1) == 40
    # Lists are ordered: another order is another digest.
    r.delete("l")
    r.rpush("l", "b", "a")
    assert r.execute_command("DEBUG", "DIGEST") != d1
    # Sets, hashes and sorted sets are not: insertion order does not matter.
    r.sadd("s1", *range(50))
    r.sadd("s2", *reversed(range(50)))
    r.hset("h1", mapping={"a": 1, "b": 2})
    r.hset("h2", mapping={"b": 2, "a": 1})
    r.zadd("z1", {"x": 1, "y": 2})
    r.zadd("z2", {"y": 2, "x": 1})
    v = r.execute_command("DEBUG", "DIGEST-VALUE", "s1", "s2", "h1", "h2", "z1", "z2")
    assert v[0] == v[1] and v[2] == v[3] and v[4] == v[5]
    # An integer-encoded string and the same digits as text are the same value.
    r.set("n", 12345)
    r.set("t", "12345")
    assert r.execute_command("DEBUG", "DIGEST-VALUE", "n") == r.execute_command("DEBUG", "DIGEST-VALUE", "t")
    # A TTL is part of a key's digest (its presence, not its time).
    before = r.execute_command("DEBUG", "DIGEST-VALUE", "n")
    r.expire("n", 1000)
    after = r.execute_command("DEBUG", "DIGEST-VALUE", "n")
    assert after != before
    r.expire("n", 2000)
    assert r.execute_command("DEBUG", "DIGEST-VALUE", "n") == after
    # The database matters.
    d = r.execute_command("DEBUG", "DIGEST")
    r.move("t", 3)
    assert r.execute_command("DEBUG", "DIGEST") != d


def test_digest_encodings_agree(new_server):
    """A value digests the same whatever its encoding."""
    srv = debug_server(new_server)
    r = srv.client()
    r.config_set("set-max-intset-entries", 0)
    r.config_set("set-max-listpack-entries", 0)
    r.config_set("zset-max-listpack-entries", 0)
    r.config_set("hash-max-listpack-entries", 0)
    r.sadd("big", 1, 2, "x")
    r.zadd("zbig", {"a": 1.5})
    r.hset("hbig", "f", "v")
    r.config_set("set-max-listpack-entries", 128)
    r.config_set("zset-max-listpack-entries", 128)
    r.config_set("hash-max-listpack-entries", 128)
    r.sadd("small", 1, 2, "x")
    r.zadd("zsmall", {"a": 1.5})
    r.hset("hsmall", "f", "v")
    assert r.object("encoding", "big") == b"hashtable" and r.object("encoding", "small") == b"listpack"
    assert r.object("encoding", "zbig") == b"skiplist" and r.object("encoding", "zsmall") == b"listpack"
    d = r.execute_command("DEBUG", "DIGEST-VALUE", "big", "small", "zbig", "zsmall", "hbig", "hsmall")
    assert d[0] == d[1] and d[2] == d[3] and d[4] == d[5]


def test_debug_needs_enable_debug_command(r):
    with pytest.raises(redis.ResponseError, match="DEBUG command not allowed"):
        r.execute_command("DEBUG", "DIGEST")


# ---- what writes propagate -----------------------------------------------


@pytest.fixture
def jr(new_server):
    srv = debug_server(new_server)
    r = srv.client()
    assert r.execute_command("DEBUG", "JOURNAL", "START") == b"OK"
    yield r
    r.execute_command("DEBUG", "JOURNAL", "STOP")


def test_journal_syntax(jr):
    with pytest.raises(redis.ResponseError, match="syntax error"):
        jr.execute_command("DEBUG", "JOURNAL", "NOPE")
    with pytest.raises(redis.ResponseError, match="out of range, must be positive"):
        jr.execute_command("DEBUG", "JOURNAL", "START", "0")


def test_plain_writes_propagate_their_argv(jr):
    jr.set("a", "1")
    jr.rpush("l", "x", "y")
    jr.hset("h", "f", "v")
    jr.execute_command("SETRANGE", "a", 0, "2")
    assert journal_cmds(jr) == [[b"SET", b"a", b"1"], [b"RPUSH", b"l", b"x", b"y"], [b"HSET", b"h", b"f", b"v"],
                                [b"SETRANGE", b"a", b"0", b"2"]]


def test_noop_writes_propagate_nothing(jr):
    jr.set("a", "1")
    jr.sadd("s", "m")
    journal(jr)
    jr.set("a", "2", nx=True)      # key exists
    jr.set("missing", "2", xx=True)
    jr.sadd("s", "m")              # already a member
    jr.srem("s", "other")
    jr.delete("nothing")
    jr.expire("nothing", 10)
    jr.persist("a")                # no TTL
    jr.lpushx("nolist", "v")
    jr.zadd("z", {"m": 1}, xx=True)
    jr.hdel("nohash", "f")
    jr.getex("a")                  # no option: a read
    jr.get("a")
    assert journal_cmds(jr) == []


def test_relative_ttls_become_absolute(jr):
    t0 = int(time.time() * 1000)
    jr.set("a", "v", ex=100)
    jr.setex("b", 100, "v")
    jr.psetex("c", 100000, "v")
    jr.set("d", "v")
    jr.expire("d", 100)
    jr.execute_command("PEXPIRE", "d", 150000, "GT")
    jr.expireat("d", int(time.time()) + 200)
    t1 = int(time.time() * 1000)
    cmds = journal_cmds(jr)
    assert [c[:3] for c in cmds] == [[b"SET", b"a", b"v"], [b"SET", b"b", b"v"], [b"SET", b"c", b"v"],
                                     [b"SET", b"d", b"v"], [b"PEXPIREAT", b"d", cmds[4][2]],
                                     [b"PEXPIREAT", b"d", cmds[5][2]], [b"PEXPIREAT", b"d", cmds[6][2]]]
    for c in cmds[:3]:
        assert c[3] == b"PXAT" and len(c) == 5
        assert t0 + 100000 <= int(c[4]) <= t1 + 100000
    assert t0 + 100000 <= int(cmds[4][2]) <= t1 + 100000
    assert int(cmds[6][2]) % 1000 == 0


def test_expiry_in_the_past_propagates_del(jr):
    jr.set("a", "v")
    jr.set("b", "v")
    jr.set("c", "v")
    journal(jr)
    jr.expire("a", -1)
    jr.set("b", "w", pxat=1)
    jr.execute_command("GETEX", "c", "PXAT", 1)
    assert journal_cmds(jr) == [[b"DEL", b"a"], [b"DEL", b"b"], [b"DEL", b"c"]]


def test_past_deadline_on_a_missing_key_propagates_nothing(jr):
    jr.set("nokey", "v", exat=1)
    assert journal_cmds(jr) == []
    jr.set("k", "v")
    journal(jr)
    jr.set("k", "v", exat=1)
    assert journal_cmds(jr) == [[b"DEL", b"k"]]
    assert not jr.exists("k")


def test_keepttl_is_one_write(jr):
    jr.set("k", "v", ex=100)
    before = jr.info("persistence")["rdb_changes_since_last_save"]
    jr.set("k", "w", keepttl=True)
    assert jr.info("persistence")["rdb_changes_since_last_save"] == before + 1
    assert 0 < jr.ttl("k") <= 100
    assert journal_cmds(jr)[-1] == [b"SET", b"k", b"w", b"KEEPTTL"]


def changes(r):
    return r.info("persistence")["rdb_changes_since_last_save"]


@pytest.mark.parametrize("setup,cmd,changes_", [
    # A new key counts each member it gets, as Redis counts changes.
    ([], ["GEOADD", "g", "13.36", "38.11", "a", "15.08", "37.50", "b"], 2),
    ([], ["ZADD", "z", "1", "a", "2", "b"], 2),
    ([], ["SADD", "s", "a", "b"], 2),
    ([], ["PFADD", "p", "a", "b"], 3),  # the key, and a register each
    # An existing key: the members that change, none when nothing does.
    ([["GEOADD", "g", "13.36", "38.11", "a"]], ["GEOADD", "g", "13.36", "38.11", "a", "15.08", "37.50", "b"], 1),
    ([["GEOADD", "g", "13.36", "38.11", "a"]], ["GEOADD", "g", "13.36", "38.11", "a"], 0),
    ([["ZADD", "z", "1", "a"]], ["ZADD", "z", "1", "a", "2", "b", "3", "c"], 2),
    ([["ZADD", "z", "1", "a"]], ["ZADD", "z", "1", "a"], 0),
    ([["ZADD", "z", "1", "a"]], ["ZADD", "z", "NX", "5", "a"], 0),
    ([["ZADD", "z", "1", "a"]], ["ZADD", "z", "GT", "0", "a"], 0),
    ([["ZADD", "z", "1", "a", "2", "b"]], ["ZREM", "z", "x", "a", "b"], 2),  # the emptied key's del counts nothing
    ([["ZADD", "z", "1", "a", "2", "b"]], ["ZREM", "z", "x", "y"], 0),
    ([["SADD", "s", "1", "2"]], ["SADD", "s", "2", "3", "4"], 2),
    ([["SADD", "s", "a", "b"]], ["SADD", "s", "a", "b"], 0),
    ([["SADD", "s", "a", "b", "c"]], ["SREM", "s", "x", "a", "b"], 2),
    ([["SADD", "s", "a", "b"]], ["SREM", "s", "x"], 0),
    ([["SADD", "s", "a"], ["SADD", "d", "b"]], ["SMOVE", "s", "d", "a"], 2),  # srem, sadd
    ([["SADD", "s", "a", "b"], ["SADD", "d", "a"]], ["SMOVE", "s", "d", "a"], 1),
    ([["SADD", "s", "a"]], ["SMOVE", "s", "d", "x"], 0),
    ([["HSET", "h", "a", "1", "b", "2", "c", "3"]], ["HDEL", "h", "x", "a", "b"], 2),
    ([["HSET", "h", "a", "1"]], ["HDEL", "h", "x"], 0),
    ([["PFADD", "p", "a"]], ["PFADD", "p", "a"], 0),
    ([["PFADD", "p", "a"]], ["PFADD", "p", "a", "b", "c"], 2),
    # SWAPDB is one change, even of a database with itself (as Redis).
    ([], ["SWAPDB", "0", "1"], 1),
    ([], ["SWAPDB", "3", "3"], 1),
])
def test_write_is_reported_once(jr, setup, cmd, changes_):
    """A write propagates once, however many members it changes, and
    counts the changes Redis counts (rdb_changes_since_last_save; see
    test_dirty.py); a write that changes nothing counts nothing and
    propagates nothing."""
    for c in setup:
        jr.execute_command(*c)
    journal(jr)
    before = changes(jr)
    jr.execute_command(*cmd)
    assert changes(jr) == before + changes_
    assert len(journal_cmds(jr)) == (1 if changes_ else 0)


def test_corrupt_sketch_is_no_write(jr):
    jr.set("trunc", b"HYLL\x01\x00\x00\x00" + b"\x00" * 7 + b"\x80" + b"\x00")
    journal(jr)
    before = changes(jr)
    with pytest.raises(redis.ResponseError, match="INVALIDOBJ"):
        jr.pfadd("trunc", "a")
    assert changes(jr) == before
    assert journal_cmds(jr) == []


def test_noop_ltrim_propagates_nothing(jr):
    jr.rpush("l", "a", "b")
    journal(jr)
    jr.ltrim("l", 0, -1)
    assert journal_cmds(jr) == []
    jr.ltrim("l", 1, -1)
    assert journal_cmds(jr) == [[b"LTRIM", b"l", b"1", b"-1"]]


def test_randomkey_while_applying_a_journal(jr):
    """A connection applying a journal does not expire keys; RANDOMKEY then
    answers a key past its deadline (as a replica does) instead of looping."""
    jr.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    try:
        jr.set("k", "v", px=20)
        time.sleep(0.05)
        host, port = jr.connection_pool.connection_kwargs["host"], jr.connection_pool.connection_kwargs["port"]
        c = RespConn(host, port, timeout=5)
        assert c.cmd("DEBUG", "JOURNAL", "APPLY", "ON") == "OK"
        assert c.cmd("RANDOMKEY") == b"k"
        assert c.cmd("GET", "k") == b"v"
        c.close()
        # Everyone else sees it expired.
        assert jr.get("k") is None
    finally:
        jr.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 1)


def test_getex_getdel_persist(jr):
    jr.set("a", "v")
    jr.set("b", "v", ex=100)
    journal(jr)
    jr.getex("a", ex=100)
    jr.getex("b", persist=True)
    jr.getdel("a")
    cmds = journal_cmds(jr)
    assert cmds[0][:2] == [b"PEXPIREAT", b"a"]
    assert cmds[1:] == [[b"PERSIST", b"b"], [b"DEL", b"a"]]


def test_float_increments_propagate_their_result(jr):
    jr.set("f", "10.5", ex=100)
    journal(jr)
    jr.incrbyfloat("f", "0.1")
    jr.hincrbyfloat("h", "x", "2.5")
    jr.hincrbyfloat("h", "x", "0.25")
    assert journal_cmds(jr) == [[b"SET", b"f", b"10.6", b"KEEPTTL"], [b"HSET", b"h", b"x", b"2.5"],
                                [b"HSET", b"h", b"x", b"2.75"]]


def test_spop_propagates_srem_or_del(jr):
    jr.sadd("s", *range(10))
    journal(jr)
    one = jr.spop("s")
    two = jr.spop("s", 2)
    cmds = journal_cmds(jr)
    assert cmds[0] == [b"SREM", b"s", one]
    assert cmds[1][:2] == [b"SREM", b"s"] and sorted(cmds[1][2:]) == sorted(two)
    # Most of the set: the members taken, not the ones left.
    rest = jr.spop("s", 6)
    cmds = journal_cmds(jr)
    assert cmds[0][:2] == [b"SREM", b"s"] and sorted(cmds[0][2:]) == sorted(rest)
    jr.spop("s", 100)
    assert journal_cmds(jr) == [[b"DEL", b"s"]]
    # Big pops are cut into batches of 1024 members.
    jr.sadd("t", *range(3000))
    journal(jr)
    jr.spop("t", 2500)
    cmds = journal_cmds(jr)
    assert [len(c) - 2 for c in cmds] == [1024, 1024, 452]
    assert jr.scard("t") == 500


def test_mpop_propagates_the_key_it_popped(jr):
    jr.rpush("l2", "a", "b", "c")
    jr.zadd("z2", {"a": 1, "b": 2, "c": 3})
    journal(jr)
    jr.lmpop(2, "l1", "l2", direction="RIGHT", count=2)
    jr.zmpop(2, ["z1", "z2"], min=True, count=5)
    assert journal_cmds(jr) == [[b"RPOP", b"l2", b"2"], [b"ZPOPMIN", b"z2", b"3"]]


def test_blocking_pops_propagate_their_plain_form(jr, new_server):
    jr.rpush("l", "a", "b", "c", "d")
    jr.zadd("z", {"a": 1, "b": 2})
    journal(jr)
    jr.blpop(["nokey", "l"], 1)
    jr.brpoplpush("l", "dst", 1)
    jr.blmove("l", "dst", 1, "LEFT", "RIGHT")
    jr.execute_command("BLMPOP", 1, 1, "l", "LEFT", "COUNT", 5)
    jr.bzpopmax("z", 1)
    jr.execute_command("BZMPOP", 1, 1, "z", "MIN")
    assert journal_cmds(jr) == [[b"LPOP", b"l"], [b"RPOPLPUSH", b"l", b"dst"],
                                [b"LMOVE", b"l", b"dst", b"LEFT", b"RIGHT"], [b"LPOP", b"l", b"1"],
                                [b"ZPOPMAX", b"z"], [b"ZPOPMIN", b"z", b"1"]]


def test_woken_blocking_pop_propagates_after_the_push(jr):
    host, port = jr.connection_pool.connection_kwargs["host"], jr.connection_pool.connection_kwargs["port"]
    got = []
    waiter = redis.Redis(host=host, port=port)
    t = threading.Thread(target=lambda: got.append(waiter.brpop("q", 10)))
    t.start()
    deadline = time.time() + 10
    while int(jr.info("clients")["blocked_clients"]) == 0 and time.time() < deadline:
        time.sleep(0.01)
    jr.lpush("q", "job")
    t.join(10)
    assert got == [(b"q", b"job")]
    assert journal_cmds(jr) == [[b"LPUSH", b"q", b"job"], [b"RPOP", b"q"]]


def test_expired_keys_propagate_as_del_first(jr):
    jr.set("a", "1", px=30)
    jr.set("b", "1", px=30)
    journal(jr)
    time.sleep(0.06)
    jr.incr("a")               # finds it expired: DEL, then its own write
    jr.get("b")                # a read that finds it expired: DEL only
    # The active cycle may reap them first: the DELs come either way, and
    # a's always before the INCR that recreated it.
    cmds = journal_cmds(jr)
    assert sorted(map(tuple, cmds)) == [(b"DEL", b"a"), (b"DEL", b"b"), (b"INCRBY", b"a", b"1")]
    assert cmds.index([b"DEL", b"a"]) < cmds.index([b"INCRBY", b"a", b"1"])
    # The active cycle reaps and propagates without any command.
    jr.set("c", "1", px=20)
    journal(jr)
    seen = []
    deadline = time.time() + 5
    while not seen and time.time() < deadline:
        time.sleep(0.05)
        seen = journal_cmds(jr)
    assert seen == [[b"DEL", b"c"]]
    assert not jr.exists("c")


def test_whole_keyspace_writes_and_select(jr):
    # One connection: its commands run on one worker, in this order.
    c = jr.connection_pool.get_connection("x")
    for cmd in (("SET", "a", "1"), ("SELECT", 4), ("SET", "b", "2"), ("SELECT", 0), ("FLUSHDB",),
                ("SWAPDB", 0, 4), ("FLUSHALL", "ASYNC")):
        c.send_command(*cmd)
        c.read_response()
    jr.connection_pool.release(c)
    assert parse_commands(journal(jr)) == [
        [b"SELECT", b"0"], [b"SET", b"a", b"1"], [b"SELECT", b"4"], [b"SET", b"b", b"2"],
        [b"SELECT", b"0"], [b"FLUSHDB"], [b"SWAPDB", b"0", b"4"], [b"FLUSHALL", b"ASYNC"]]


def test_journal_limit_reports_loss(new_server):
    srv = debug_server(new_server)
    r = srv.client()
    r.execute_command("DEBUG", "JOURNAL", "START", 2000)
    for i in range(200):
        r.set("k%d" % i, "x" * 50)
    with pytest.raises(redis.ResponseError, match="journal overflowed"):
        journal(r)
    # The server keeps serving; a new start records again.
    r.execute_command("DEBUG", "JOURNAL", "START")
    r.set("z", "1")
    assert journal_cmds(r) == [[b"SET", b"z", b"1"]]


# ---- replay: many writers, all families, several threads -------------------


def random_op(rnd, keys):
    """One random write (or read) over every family, on a small keyspace so
    clients collide on keys; hash tags keep some multi-key groups in one
    slot, others span shards."""
    k = rnd.choice(keys)
    k2 = rnd.choice(keys)
    v = str(rnd.randint(0, 50))
    n = rnd.randint(1, 4)
    ops = [
        ("SET", "s:" + k, v), ("SET", "s:" + k, v, "PX", rnd.randint(1, 80)), ("INCR", "n:" + k),
        ("INCRBY", "n:" + k, rnd.randint(-5, 5)), ("INCRBYFLOAT", "f:" + k, "0.5"), ("APPEND", "s:" + k, v),
        ("SETRANGE", "s:" + k, rnd.randint(0, 5), v), ("GETDEL", "s:" + k), ("GETEX", "s:" + k, "EX", 100),
        ("SETEX", "s:" + k, 100, v), ("MSET", "s:" + k, v, "s:" + k2, v), ("DEL", "s:" + k, "l:" + k2),
        ("EXPIRE", "l:" + k, rnd.choice([1, 100])), ("PEXPIRE", "h:" + k, rnd.randint(1, 60)),
        ("PERSIST", "l:" + k), ("RENAME", "s:" + k, "s:" + k2), ("COPY", "h:" + k, "h:" + k2, "REPLACE"),
        ("MOVE", "s:" + k, rnd.randint(1, 3)), ("LPUSH", "l:" + k, v, v), ("RPUSH", "l:" + k, v),
        ("LPOP", "l:" + k), ("RPOP", "l:" + k, n), ("LMOVE", "l:" + k, "l:" + k2, "LEFT", "RIGHT"),
        ("LTRIM", "l:" + k, 0, 5), ("LREM", "l:" + k, 1, v), ("LINSERT", "l:" + k, "BEFORE", v, "ins"),
        ("LSET", "l:" + k, 0, v), ("BLPOP", "l:" + k, "l:" + k2, 0.01), ("LMPOP", 2, "l:" + k, "l:" + k2, "LEFT"),
        ("HSET", "h:" + k, "f" + v, v), ("HDEL", "h:" + k, "f" + v), ("HINCRBY", "h:" + k, "c", 2),
        ("HINCRBYFLOAT", "h:" + k, "fl", "1.25"), ("HSETNX", "h:" + k, "x", v),
        ("SADD", "t:" + k, v, str(rnd.randint(0, 50))), ("SREM", "t:" + k, v), ("SPOP", "t:" + k),
        ("SPOP", "t:" + k, n), ("SMOVE", "t:" + k, "t:" + k2, v), ("SINTERSTORE", "t:" + k, "t:" + k, "t:" + k2),
        ("SUNIONSTORE", "t:" + k2, "t:" + k, "t:" + k2), ("SDIFFSTORE", "t:" + k, "t:" + k2, "t:" + k),
        ("ZADD", "z:" + k, rnd.randint(0, 20) / 2, "m" + v), ("ZINCRBY", "z:" + k, 0.5, "m" + v),
        ("ZREM", "z:" + k, "m" + v), ("ZPOPMIN", "z:" + k), ("ZREMRANGEBYRANK", "z:" + k, 0, 1),
        ("ZUNIONSTORE", "z:" + k2, 2, "z:" + k, "z:" + k2), ("ZRANGESTORE", "z:" + k2, "z:" + k, 0, 3),
        ("BZPOPMAX", "z:" + k, 0.01), ("ZMPOP", 1, "z:" + k, "MAX", "COUNT", n),
        ("SETBIT", "b:" + k, rnd.randint(0, 100), rnd.randint(0, 1)), ("BITOP", "OR", "b:" + k2, "b:" + k, "b:" + k2),
        ("PFADD", "p:" + k, v, "x" + v), ("PFMERGE", "p:" + k2, "p:" + k), ("PFCOUNT", "p:" + k),
        ("GEOADD", "g:" + k, rnd.randint(-170, 170), rnd.randint(-80, 80), "m" + v),
        ("GET", "s:" + k), ("LRANGE", "l:" + k, 0, -1), ("SCAN", 0),
        ("SELECT", rnd.choice([0, 0, 0, 1, 2])),
    ]
    return rnd.choice(ops)


def run_clients(port, seconds, clients, seed, batch, check=None):
    """`clients` threads, each with its own random.Random, send pipelined
    batches (batch(rnd) gives a list of commands) for `seconds` and read
    every reply; check(op, reply), when given, returns a complaint or None.
    Fails on a hang, a broken connection or a complaint."""
    errors = []

    def client(i):
        rnd = random.Random(seed * 1000 + i)
        c = RespConn("127.0.0.1", port, timeout=30)
        deadline = time.time() + seconds
        try:
            while time.time() < deadline:
                ops = batch(rnd)
                c.send(b"".join(encode(*op) for op in ops))
                for op in ops:
                    rep = c.read()
                    bad = check(op, rep) if check else None
                    if bad:
                        errors.append(bad)
        except Exception as e:  # reported by the main thread
            errors.append(e)
        finally:
            c.close()

    ts = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(seconds + 60)
    assert not any(t.is_alive() for t in ts), "clients hung"
    assert not errors, errors[:3]


def run_random_load(port, seconds, clients, seed, flushes=True):
    keys = ["k%d" % i for i in range(12)] + ["{t}%d" % i for i in range(4)]

    def batch(rnd):
        ops = []
        for _ in range(20):
            if flushes and rnd.random() < 0.002:
                ops.append(("FLUSHDB",) if rnd.random() < 0.7 else ("SWAPDB", 0, 1))
            else:
                ops.append(random_op(rnd, keys))
        return ops

    # Error replies (WRONGTYPE...) are part of the mix.
    run_clients(port, seconds, clients, seed, batch)


def test_concurrent_writes_replay_to_the_same_dataset(new_server):
    """8 clients on a 4-thread server, every family, short and long TTLs,
    FLUSHDB and SWAPDB, blocking pops: the merged journal replayed into a
    fresh server gives the same DEBUG DIGEST."""
    src = debug_server(new_server, 4)
    r = src.client()
    r.execute_command("DEBUG", "JOURNAL", "START")
    seed = random.randint(1, 10 ** 6)
    run_random_load(src.port, 4, 8, seed=seed)
    # Freeze the source: no more background expiry, so the journal read
    # next describes exactly what the digest sees (keys expired but not
    # yet reaped included, as in Redis's digest).
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    data = journal(r)
    want = r.execute_command("DEBUG", "DIGEST")
    assert len(parse_commands(data)) > 2000
    assert want != ZERO_DIGEST
    dst = debug_server(new_server, 2)
    d = dst.client()
    d.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    errors = replay(dst.port, data)
    assert not errors, (seed, errors[:5])
    assert d.execute_command("DEBUG", "DIGEST") == want, seed
    assert d.info("keyspace") == r.info("keyspace"), seed


def test_replay_into_redis_gives_redis_the_same_digest(new_server):
    """The journal is plain Redis protocol and the digest is Redis's: a real
    redis-server fed HotKV's journal holds the same dataset and says so."""
    if not shutil.which("redis-server"):
        pytest.fail("redis-server is needed (scripts/deps.sh test installs it)")
    srv = debug_server(new_server, 2)
    r = srv.client()
    r.execute_command("DEBUG", "JOURNAL", "START")
    # Scores with short exact decimal forms: Redis 7.0 prints scores with
    # %.17g in its digest, Redis 8 (and HotKV) with the shortest form;
    # they agree on these.
    rnd = random.Random(7)
    for i in range(300):
        r.set("s%d" % i, rnd.randint(0, 10 ** 9))
        r.rpush("list", "e%d" % i, i)
        r.sadd("set", i, "m%d" % i)
        r.sadd("iset", i)
        r.hset("hash", "f%d" % i, i * 7)
        r.zadd("zset", {"z%d" % i: rnd.randint(-100, 100) / 4})
    r.zadd("small", {"a": 1.5, "b": -2})
    r.hset("smallh", mapping={"x": "1", "y": "two"})
    r.expire("s1", 1000)
    r.incrbyfloat("float", "3.25")
    r.spop("set", 10)
    r.lmpop(1, "list", direction="LEFT", count=7)
    r.pfadd("hll", *range(100))
    r.setbit("bits", 77, 1)
    r.execute_command("GEOADD", "geo", 13.361389, 38.115556, "Palermo", 15.087269, 37.502669, "Catania")
    c = r.connection_pool.get_connection("x")
    c.send_command("SELECT", 5)
    c.read_response()
    c.send_command("SET", "other-db", "v")
    c.read_response()
    c.send_command("SELECT", 0)
    c.read_response()
    r.connection_pool.release(c)
    data = journal(r)
    with real_redis("--enable-debug-command", "yes") as port:
        errors = replay(port, data, apply=False)
        assert not errors, errors[:5]
        red = redis.Redis(port=port)
        assert red.execute_command("DEBUG", "DIGEST") == r.execute_command("DEBUG", "DIGEST")
        keys = ["list", "set", "iset", "hash", "zset", "small", "smallh", "float", "hll", "bits", "geo", "s1"]
        assert red.execute_command("DEBUG", "DIGEST-VALUE", *keys) == r.execute_command("DEBUG", "DIGEST-VALUE", *keys)
        red.close()


# ---- blocked clients -------------------------------------------------------


def blocked(r):
    return int(r.info("clients")["blocked_clients"])


def wait_for(pred, timeout=10):
    deadline = time.time() + timeout
    while not pred():
        assert time.time() < deadline, "timed out"
        time.sleep(0.01)


def test_blocked_counters_return_to_zero(server, r):
    """Served, timed out, unblocked and disconnected waiters all leave the
    counters (blocked_clients, total_blocking_keys) as they found them."""
    waiters = []
    for i in range(12):
        c = server.conn()
        c.send(b"*4\r\n$5\r\nBLPOP\r\n$2\r\nq1\r\n$2\r\nq2\r\n$1\r\n%d\r\n" % (0 if i % 3 else 1))
        waiters.append(c)
    wait_for(lambda: blocked(r) == 12)
    info = r.info("clients")
    assert info["total_blocking_keys"] == 2
    r.rpush("q1", *range(4))
    ids = [int(line.split(" ")[0][3:]) for line in r.execute_command("CLIENT", "LIST").decode().splitlines()
           if "cmd=blpop" in line and "flags=b" in line]
    r.execute_command("CLIENT", "UNBLOCK", ids[0])
    waiters[-1].close()
    time.sleep(1.2)  # the one-second waiters time out
    for c in waiters[:-1]:
        c.close()
    wait_for(lambda: blocked(r) == 0)
    wait_for(lambda: r.info("clients")["total_blocking_keys"] == 0)
    assert r.info("clients")["clients_in_timeout_table"] == 0


def test_paused_clients_count_as_blocked(server, r):
    c = server.conn()
    try:
        assert r.execute_command("CLIENT", "PAUSE", 2000, "WRITE")
        c.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n")
        wait_for(lambda: blocked(r) == 1)
        r.execute_command("CLIENT", "UNPAUSE")
        assert c.read() == "OK"
        wait_for(lambda: blocked(r) == 0)
    finally:
        r.execute_command("CLIENT", "UNPAUSE")
        c.close()


def test_one_worker_journals(new_server):
    """A server with one worker thread has one journal stream; its cache-
    line alignment holds (the sanitizer build checks it) and it records."""
    r = debug_server(new_server, 1).client()
    r.execute_command("DEBUG", "JOURNAL", "START")
    r.set("a", 1)
    assert journal_cmds(r) == [[b"SET", b"a", b"1"]]
