"""Transactions and scripts through the journal: what EXEC and EVAL write
propagates as one unit (MULTI ... EXEC when there are several commands, the
script's effects rather than the EVAL), and a mixed MULTI / EVAL / EVALSHA
workload from many clients on several threads replays into a fresh HotKV
and into a real redis-server to the same DEBUG DIGEST."""
import random
import shutil

import pytest
import redis

from conftest import real_redis
from resp import parse_commands
from test_exec import debug_server, journal, journal_cmds, random_op, replay, run_clients

ZERO_DIGEST = b"0" * 40


@pytest.fixture
def jr(new_server):
    srv = debug_server(new_server, 2)
    r = srv.client()
    assert r.execute_command("DEBUG", "JOURNAL", "START") == b"OK"
    yield r
    r.execute_command("DEBUG", "JOURNAL", "STOP")


def test_exec_propagates_multi_exec(jr):
    p = jr.pipeline(transaction=True)
    p.set("a", 1).incr("a").get("a").lpush("l", "x")
    assert p.execute() == [True, 2, b"2", 1]
    assert journal_cmds(jr) == [[b"MULTI"], [b"SET", b"a", b"1"], [b"INCRBY", b"a", b"1"], [b"LPUSH", b"l", b"x"],
                                [b"EXEC"]]


def test_exec_of_one_write_is_not_wrapped(jr):
    p = jr.pipeline(transaction=True)
    p.get("a").set("a", 1).get("a")
    p.execute()
    assert journal_cmds(jr) == [[b"SET", b"a", b"1"]]


def test_exec_of_reads_propagates_nothing(jr):
    p = jr.pipeline(transaction=True)
    p.get("a").exists("b")
    p.execute()
    assert journal_cmds(jr) == []


def test_exec_propagates_rewritten_forms(jr):
    jr.sadd("s", "a")
    journal(jr)
    p = jr.pipeline(transaction=True)
    p.spop("s").expire("k", 100).incrbyfloat("f", 1.5)
    p.execute()
    cmds = journal_cmds(jr)
    assert cmds[0] == [b"MULTI"] and cmds[-1] == [b"EXEC"]
    assert cmds[1] == [b"SREM", b"s", b"a"] or cmds[1] == [b"DEL", b"s"]
    assert cmds[2][0] == b"SET" and cmds[2][1:3] == [b"f", b"1.5"]


def test_script_propagates_its_effects(jr):
    jr.sadd("s", "m")
    journal(jr)
    body = "redis.call('SET', KEYS[1], 'v'); redis.call('SPOP', KEYS[2]); return redis.call('INCR', KEYS[3])"
    assert jr.eval(body, 3, "k", "s", "n") == 1
    assert journal_cmds(jr) == [[b"MULTI"], [b"SET", b"k", b"v"], [b"SREM", b"s", b"m"], [b"INCR", b"n"], [b"EXEC"]]


def test_script_of_one_write_and_of_none(jr):
    assert jr.eval("return redis.call('SET', KEYS[1], 'x')", 1, "k") == b"OK"
    assert jr.eval("return redis.call('GET', KEYS[1])", 1, "k") == b"x"
    assert journal_cmds(jr) == [[b"SET", b"k", b"x"]]


def test_script_with_repl_none_propagates_nothing(jr):
    body = "redis.set_repl(redis.REPL_NONE); redis.call('SET', KEYS[1], 'x'); return 1"
    assert jr.eval(body, 1, "k") == 1
    assert jr.get("k") == b"x"
    assert journal_cmds(jr) == []


def test_script_reaching_undeclared_keys_propagates_them(jr):
    body = "redis.call('SET', ARGV[1], '1'); redis.call('SET', ARGV[2], '2'); return 1"
    for i in range(3):
        assert jr.eval(body, 0, "u%d" % i, "w%d" % i) == 1
    cmds = journal_cmds(jr)
    for i in range(3):
        assert [b"SET", b"u%d" % i, b"1"] in cmds and [b"SET", b"w%d" % i, b"2"] in cmds
    assert cmds.count([b"MULTI"]) == 3


# ---- replay of a concurrent mixed workload ----------------------------------------

SCRIPTS = [
    # declared keys only
    "redis.call('INCR', KEYS[1]); redis.call('RPUSH', KEYS[2], ARGV[1]); return redis.call('GET', KEYS[1])",
    # undeclared keys, read then written
    "local v = redis.call('GET', ARGV[1]); redis.call('SET', ARGV[2], (v or '') .. 'x'); return 1",
    # effects that must not replay as the script: SPOP, relative TTLs, floats
    "redis.call('SADD', KEYS[1], ARGV[1], 'z'); redis.call('SPOP', KEYS[1]); "
    "redis.call('EXPIRE', KEYS[2], 100); return redis.call('INCRBYFLOAT', KEYS[3], '0.5')",
    # a data-dependent branch on a key it did not declare
    "if redis.call('EXISTS', ARGV[1]) == 1 then redis.call('DEL', ARGV[1]) "
    "else redis.call('HSET', ARGV[1], 'f', ARGV[2]) end; return 1",
]


def mixed_batch(rnd, keys, shas):
    ops = []
    for _ in range(10):
        x = rnd.random()
        k, k2 = rnd.choice(keys), rnd.choice(keys)
        if x < 0.25:
            ops.append(("MULTI",))
            for _ in range(rnd.randint(1, 4)):
                op = random_op(rnd, keys)
                if op[0] not in ("SELECT", "SCAN"):
                    ops.append(op)
            ops.append(("EXEC",) if rnd.random() < 0.9 else ("DISCARD",))
        elif x < 0.5:
            i = rnd.randrange(len(SCRIPTS))
            v = str(rnd.randint(0, 9))
            args = [["n:" + k, "l:" + k2, v], ["s:" + k, "s:" + k2], ["t:" + k, "s:" + k2, "f:" + k, v],
                    ["h:" + k, v]][i]
            nkeys = [2, 0, 3, 0][i]
            if rnd.random() < 0.5:
                ops.append(("EVALSHA", shas[i], nkeys, *args))
            else:
                ops.append(("EVAL", SCRIPTS[i], nkeys, *args))
        else:
            op = random_op(rnd, keys)
            if op[0] != "SELECT":
                ops.append(op)
    return ops


def test_mixed_workload_replays_to_the_same_dataset(new_server):
    src = debug_server(new_server, 4)
    r = src.client()
    shas = [r.script_load(s) for s in SCRIPTS]
    r.execute_command("DEBUG", "JOURNAL", "START")
    keys = ["k%d" % i for i in range(10)] + ["{t}%d" % i for i in range(4)]
    seed = random.randint(1, 10 ** 6)
    run_clients(src.port, 2, 8, seed, lambda rnd: mixed_batch(rnd, keys, shas))
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    data = journal(r)
    want = r.execute_command("DEBUG", "DIGEST")
    cmds = parse_commands(data)
    assert len(cmds) > 1000
    assert any(c[0].upper() == b"MULTI" for c in cmds)
    # Scripts propagate their effects, never themselves.
    assert not any(c[0].upper() in (b"EVAL", b"EVALSHA") for c in cmds)
    assert want != ZERO_DIGEST
    dst = debug_server(new_server, 2)
    d = dst.client()
    d.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    errors = replay(dst.port, data)
    assert not errors, (seed, errors[:5])
    assert d.execute_command("DEBUG", "DIGEST") == want, seed


def test_mixed_workload_replays_into_redis(new_server):
    """Deterministic (so that Redis 7.0's digest formatting agrees), but
    every shape: transactions, scripts with declared and undeclared keys,
    rewritten effects, SELECT inside a transaction."""
    if not shutil.which("redis-server"):
        pytest.fail("redis-server is needed (scripts/deps.sh test installs it)")
    srv = debug_server(new_server, 2)
    r = srv.client()
    shas = [r.script_load(s) for s in SCRIPTS]
    r.execute_command("DEBUG", "JOURNAL", "START")
    rnd = random.Random(11)
    for i in range(200):
        k, k2 = "k%d" % rnd.randint(0, 20), "k%d" % rnd.randint(0, 20)
        p = r.pipeline(transaction=True)
        p.incr("n:" + k).rpush("l:" + k2, i).hset("h:" + k, "f%d" % (i % 7), i).zadd("z:" + k, {"m%d" % i: i / 4})
        p.execute()
        v = str(i % 5)
        r.evalsha(shas[0], 2, "n:" + k, "l:" + k2, v)
        r.evalsha(shas[1], 0, "s:" + k, "s:" + k2)
        r.eval(SCRIPTS[2], 3, "t:" + k, "s:" + k2, "f:" + k, v)
        r.evalsha(shas[3], 0, "hh:" + k, v)
    c = r.connection_pool.get_connection("x")
    for cmd in (("MULTI",), ("SELECT", 3), ("SET", "in-db3", "v"), ("EXEC",), ("SELECT", 0)):
        c.send_command(*cmd)
        c.read_response()
    r.connection_pool.release(c)
    data = journal(r)
    want = r.execute_command("DEBUG", "DIGEST")
    with real_redis("--enable-debug-command", "yes") as port:
        errors = replay(port, data, apply=False)
        assert not errors, errors[:5]
        red = redis.Redis(port=port)
        assert red.execute_command("DEBUG", "DIGEST") == want
        red.close()
